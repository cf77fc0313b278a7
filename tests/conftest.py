import sys
from pathlib import Path

# Test helpers (sample_markers.py) are imported as top-level modules.
sys.path.insert(0, str(Path(__file__).parent))
