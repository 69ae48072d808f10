"""From a finished run to what users load: exports (safe checkpoint reading, atomic folders), scorer
bundles and publishing to the Hugging Face Hub."""
