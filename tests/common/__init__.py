"""Helpers shared by the test folders (integration, docker)."""
