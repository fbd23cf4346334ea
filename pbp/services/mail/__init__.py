"""Outgoing mail: preferences, the outbox rows, and their delivery."""
