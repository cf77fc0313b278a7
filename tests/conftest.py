import sys
from pathlib import Path

# Test helpers (sample_markers.py) are imported as top-level modules.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(config, items):
    """Files with slow tests (torch runs, real editors, builds; the `slow` marker) first, the rest in their order:
    with whole files per xdist worker, a long file started last would leave the other worker idle at the end."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: order within a file is kept
