from .cli import main

if __name__ == "__main__":      # Dask starts its workers with "spawn", which imports this
    main()
