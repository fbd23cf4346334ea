"""Accounts: invitations, logins and password resets, open sign-up, API tokens, the secret
calendar address."""
