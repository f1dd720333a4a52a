// Sync: see Docs/CONTAINER-FORMAT.md
