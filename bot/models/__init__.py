"""The model classes a checkout holds and the sources that build them: catalogue, index, sources.

Below both selection and the runner. `catalog` and `index` read text and JSON only (the light
install uses them); `sources` builds models and imports torch and transformers lazily, only when
the runner asks for a build.
"""
