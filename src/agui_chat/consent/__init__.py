"""The consent engine: everything that decides whether a tool runs, each decision in one place.

- ``_rules``: is this call gated, may this answer be used for this request, the request ids;
- ``_plan``: which answer pairs with which request, and the resume plan the tool loop runs.

Every layer (the tool loop, ``AGUIServer``, ``AGUIChatClient``, the content classes) asks
these modules and decides none of it again. Nothing is exported here: the public names stay
where DESIGN's contract puts them.
"""
