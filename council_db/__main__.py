from council_db.cli import main

main()
