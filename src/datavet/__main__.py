from datavet.cli import main

raise SystemExit(main())
