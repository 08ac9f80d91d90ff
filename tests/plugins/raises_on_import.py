"""A Python probe plug-in that raises as it is imported (tests/integration/test_probes.py)."""
CHECKS = ["never-decided"]
raise RuntimeError("this probe plug-in cannot be imported")
