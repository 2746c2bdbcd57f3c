"""Frontend: read a function's source, parse it with gast and resolve the names it reads."""
