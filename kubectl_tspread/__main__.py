from kubectl_tspread.cli import main

if __name__ == "__main__":
    main()
