"""The command-line face: one module per command over the engine; `main` dispatches."""
