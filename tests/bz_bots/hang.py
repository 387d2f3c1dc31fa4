"""A Botzone bot that never answers."""

import time

time.sleep(60)
