"""Accounts: invitations, logins and password resets, open sign-up, API tokens."""
