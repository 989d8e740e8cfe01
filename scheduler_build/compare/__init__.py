"""`compare` and `snapshot.*`: replay a cluster snapshot through two schedulers and diff the placements
(docs/compare.md)."""
