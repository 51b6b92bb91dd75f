"""The tools around the ladder: thin layers over the package's API.

- ``cli``       ``python -m rungs index | search | ask``
- ``doctor``    ``python -m rungs doctor``: this machine checked before a workshop
- ``workshop``  ``python -m rungs workshop``: the notebooks copied into a learner's own folder
- ``book``      ``python -m rungs book``: the notebooks as a static site, readable offline
"""
