"""`explain POD`: why a pod landed where it did, or nowhere, from the annotations a debuggable build wrote."""
