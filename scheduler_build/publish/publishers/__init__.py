"""One publisher per destination (publish/publisher.py's protocol); flows/publishers.py composes them."""
