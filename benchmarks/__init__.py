"""adsim's benchmark suite: one script per area, a shared problem registry
(``problems``) and timing method (``timing``); run ``python -m benchmarks``."""
