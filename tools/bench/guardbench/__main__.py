import sys

from guardbench.main import main

sys.exit(main(sys.argv[1:]))
