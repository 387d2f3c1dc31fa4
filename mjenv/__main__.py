import sys

from mjenv.cli import main

sys.exit(main())
