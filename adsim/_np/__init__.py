"""NumPy semantics on active arrays, by topic; adsim/_numpy_api.py dispatches
NumPy's calls to them. Modules import only lower layers: core, then views,
then the rest."""
