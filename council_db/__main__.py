from council_db.cli.app import main

main()
