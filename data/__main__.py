"""``python -m data COMMAND``: the data layer's command line."""

from data.cli import main

raise SystemExit(main())
