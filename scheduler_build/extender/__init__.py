"""A reference kube-scheduler extender: protocol types, policies, a watch-fed cache and a
uvicorn server (`service`). `python -m scheduler_build.extender --help`. Importing the package
loads nothing: `config` is the leaf the task layer reads."""
