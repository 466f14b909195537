"""The topology file: its schema, the catalog of files, and what-if edits."""
