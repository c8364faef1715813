"""Staff of the deployment: local console accounts and console sign-in sessions.

    store = StaffStore(settings.staff_db)          # one SQLite file, owner-only
    accounts = Accounts(store)                      # si-agent staff add|list|remove|passwd
    sessions = ConsoleSessions(store)               # who is signed in to /console

Local accounts are the embedded default for a single machine; a deployment with an
identity provider signs staff in with its gateway's tokens instead (the ``roles``
claim, ``si_agent.server.console``). Passwords are hashed with Argon2id
(argon2-cffi); a sign-in session is a random token whose SHA-256 alone is stored.
"""

from si_agent.staff.accounts import ROLES, Account, Accounts
from si_agent.staff.sessions import ConsoleSession, ConsoleSessions
from si_agent.staff.store import StaffStore

__all__ = ["ROLES", "Account", "Accounts", "ConsoleSession", "ConsoleSessions", "StaffStore"]
