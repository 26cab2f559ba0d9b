"""``python -m tilec.tools`` runs ``tile-opt``."""

from tilec.tools.tile_opt import main

if __name__ == "__main__":
    main()
