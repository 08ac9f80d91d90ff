# fault: the script puts a fake gc module in sys.modules (issue 42, item 1)
# run: scan -- {script}
# exit: 3
# text: sys.modules['gc']
import sys
import types

fake = types.ModuleType("gc")
fake.garbage = []
fake.get_objects = lambda generation=None: []
fake.collect = lambda generation=2: 0
sys.modules["gc"] = fake


def keep():
    frame = sys._getframe()
    return frame


keep()
