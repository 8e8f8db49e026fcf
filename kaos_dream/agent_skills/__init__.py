"""Agent Skills (the open ``SKILL.md`` folder format) in and out of a library: validate and import a
folder or a tree of them, keep a library in step with a tree, export what works back to folders."""
