"""Emit: naming, unparsing with `# grad of:` comments, compiling and caching generated code."""
