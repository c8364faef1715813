"""JWT key rotation (``SI_JWT_KEYS`` by ``kid``) and refresh tokens, through the real API."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import timedelta

import jwt as pyjwt
import pytest

from si_agent.config.settings import DEV_JWT_SECRET, Settings
from si_agent.errors import SettingsError
from si_agent.server import create_app
from si_agent.server.auth import InsecureSettings
from si_agent.server.identity import VERIFIED_TOKENS

OLD, NEW, OTHER = "o" * 40, "n" * 40, "x" * 40
# What a prod deployment that leaves SI_JWT_SECRET at its default must set instead.
OWN_SECRETS = {"audit_pepper": "a" * 40, "upload_key": "u" * 40}


def _app(settings, **changes):
    return create_app(settings.replace(**changes)).test_client()


def _token(client, user="alice") -> dict:
    res = client.post("/api/token", json={"user_id": user})
    assert res.status_code == 200
    return res.get_json()


def _session(client, token):
    return client.get("/api/session", headers={"Authorization": f"Bearer {token}"})


def _claims(lifetime: int = 60, **extra) -> dict:
    now = int(time.time())
    return {"sub": "alice", "type": "access", "fresh": False, "jti": "j", "iat": now,
            "nbf": now, "exp": now + lifetime, **extra}


def _hs256(header: dict, claims: dict, secret: str) -> str:
    """A token with any header (pyjwt refuses to write a malformed kid)."""
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing = f"{part(json.dumps(header).encode())}.{part(json.dumps(claims).encode())}"
    signature = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{part(signature)}"


def _error(res) -> tuple[int, str]:
    return res.status_code, res.get_json()["error"]["code"]


def test_rotation_old_and_new_key_both_pass_until_the_old_one_is_removed(settings):
    before = _app(settings, jwt_keys=(("k1", OLD),))
    old_token = _token(before)["access_token"]
    assert pyjwt.get_unverified_header(old_token)["kid"] == "k1"

    # Step 1 of a rotation: the new key is added last; it verifies, the old one still signs.
    added = _app(settings, jwt_keys=(("k1", OLD), ("k2", NEW)))
    assert pyjwt.get_unverified_header(_token(added)["access_token"])["kid"] == "k1"
    early = pyjwt.encode(_claims(), NEW, algorithm="HS256", headers={"kid": "k2"})
    assert _session(added, early).status_code == 200 and _session(added, old_token).status_code == 200

    # Step 2: the new key moves first and signs; the old one still verifies.
    during = _app(settings, jwt_keys=(("k2", NEW), ("k1", OLD)))
    new_token = _token(during)["access_token"]
    assert pyjwt.get_unverified_header(new_token)["kid"] == "k2"
    pyjwt.decode(new_token, NEW, algorithms=["HS256"])  # really signed with the new key
    assert _session(during, old_token).status_code == 200
    assert _session(during, new_token).status_code == 200

    # Step 3: the old key is gone; its tokens are refused, the new ones still pass.
    after = _app(settings, jwt_keys=(("k2", NEW),))
    assert _error(_session(after, old_token)) == (401, "invalid_token")
    assert _session(after, new_token).status_code == 200


def test_unknown_or_malformed_kid_is_an_invalid_token(settings):
    client = _app(settings, jwt_keys=(("k1", OLD), ("k2", NEW)))
    # Signed with a key of the set, but naming a kid that is not in it.
    unknown = pyjwt.encode(_claims(), OLD, algorithm="HS256", headers={"kid": "k9"})
    assert _error(_session(client, unknown)) == (401, "invalid_token")
    odd = _hs256({"alg": "HS256", "typ": "JWT", "kid": 5}, _claims(), OLD)  # kid not a string
    assert _error(_session(client, odd)) == (401, "invalid_token")
    # A kid of the set with another key's signature is a forgery.
    forged = pyjwt.encode(_claims(), OTHER, algorithm="HS256", headers={"kid": "k1"})
    assert _error(_session(client, forged)) == (401, "invalid_token")
    # The chat endpoint (rate-limited, so the limiter reads the token too) answers the same.
    res = client.post("/api/chat", json={"message": "你好"},
                      headers={"Authorization": f"Bearer {unknown}"})
    assert _error(res) == (401, "invalid_token")


def test_token_without_kid_is_checked_with_the_signing_key(settings):
    client = _app(settings, jwt_keys=(("k2", NEW), ("k1", OLD)))
    assert _session(client, pyjwt.encode(_claims(), NEW, algorithm="HS256")).status_code == 200
    res = _session(client, pyjwt.encode(_claims(), OLD, algorithm="HS256"))
    assert _error(res) == (401, "invalid_token")


def test_without_a_key_set_the_single_secret_works_as_before(client, settings):
    token = _token(client)["access_token"]
    assert "kid" not in pyjwt.get_unverified_header(token)
    pyjwt.decode(token, settings.jwt_secret, algorithms=["HS256"])
    # The kid of a token is not looked at without a key set (the single key verifies).
    named = pyjwt.encode(_claims(), settings.jwt_secret, algorithm="HS256",
                         headers={"kid": "anything"})
    assert _session(client, named).status_code == 200


def test_prod_checks_every_key_of_the_set(settings):
    prod = settings.replace(auth_mode="prod", **OWN_SECRETS)
    with pytest.raises(InsecureSettings, match="kid 'k2'"):
        create_app(prod.replace(jwt_keys=(("k1", OLD), ("k2", "short"))))
    with pytest.raises(InsecureSettings, match="kid 'k1'"):
        create_app(prod.replace(jwt_keys=(("k1", DEV_JWT_SECRET), ("k2", NEW))))
    # A key set replaces SI_JWT_SECRET: the default secret left in place is not used.
    client = create_app(prod.replace(jwt_keys=(("k1", OLD), ("k2", NEW)))).test_client()
    token = pyjwt.encode(_claims(), NEW, algorithm="HS256", headers={"kid": "k2"})
    assert _session(client, token).status_code == 200
    forged = pyjwt.encode(_claims(), DEV_JWT_SECRET, algorithm="HS256")
    assert _error(_session(client, forged)) == (401, "invalid_token")


@pytest.mark.parametrize("missing", ["SI_AUDIT_PEPPER", "SI_UPLOAD_KEY"])
def test_prod_without_jwt_secret_needs_its_own_pepper_and_upload_key(settings, missing):
    # A key set (or RS256) signs without SI_JWT_SECRET, but the audit pepper and the
    # step-file key fall back to it: left at the public default, both are refused.
    own = {**OWN_SECRETS, missing.removeprefix("SI_").lower(): None}
    (_, public) = _rsa_pair()
    for prod in (settings.replace(auth_mode="prod", jwt_keys=(("k1", OLD),),
                                  jwt_secret=DEV_JWT_SECRET, **own),
                 settings.replace(auth_mode="prod", jwt_algorithm="RS256",
                                  jwt_public_key=public, jwt_secret=DEV_JWT_SECRET, **own),
                 settings.replace(auth_mode="prod", jwt_keys=(("k1", OLD),),
                                  jwt_secret="short", **own)):
        with pytest.raises(InsecureSettings, match=missing):
            create_app(prod)
    # A strong SI_JWT_SECRET is a safe fallback; so are the two variables set.
    create_app(settings.replace(auth_mode="prod", jwt_keys=(("k1", OLD),), jwt_secret=OTHER,
                                **own))
    create_app(settings.replace(auth_mode="prod", jwt_keys=(("k1", OLD),), **OWN_SECRETS))
    create_app(settings.replace(jwt_keys=(("k1", OLD),), **own))  # dev mode: not checked


def _rsa_pair():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def test_rs256_identity_provider_rotates_its_keys(settings, tmp_path):
    (old_private, old_public), (new_private, new_public) = _rsa_pair(), _rsa_pair()
    path = tmp_path / "new.pem"
    path.write_text(new_public)
    env = {"SI_AUTH_MODE": "prod", "SI_JWT_ALGORITHM": "RS256",
           "SI_JWT_KEYS": f"idp-1:{old_public.replace(chr(10), chr(92) + 'n')},idp-2:{path}"}
    parsed = Settings.from_env(env)
    assert parsed.jwt_keys == (("idp-1", old_public), ("idp-2", new_public))
    both = _app(settings, auth_mode="prod", jwt_algorithm="RS256", jwt_keys=parsed.jwt_keys,
                **OWN_SECRETS)
    old_token = pyjwt.encode(_claims(), old_private, algorithm="RS256", headers={"kid": "idp-1"})
    new_token = pyjwt.encode(_claims(), new_private, algorithm="RS256", headers={"kid": "idp-2"})
    assert _session(both, old_token).status_code == 200
    assert _session(both, new_token).status_code == 200
    swapped = pyjwt.encode(_claims(), old_private, algorithm="RS256", headers={"kid": "idp-2"})
    assert _error(_session(both, swapped)) == (401, "invalid_token")

    after = _app(settings, auth_mode="prod", jwt_algorithm="RS256",
                 jwt_keys=(("idp-2", new_public),), **OWN_SECRETS)
    assert _error(_session(after, old_token)) == (401, "invalid_token")
    assert _session(after, new_token).status_code == 200


def test_key_set_settings_are_checked():
    with pytest.raises(SettingsError, match="SI_JWT_KEYS names a kid twice") as err:
        Settings.from_env({"SI_JWT_KEYS": f"k1:{OLD},k1:{NEW}"})
    assert OLD not in str(err.value) and NEW not in str(err.value)
    with pytest.raises(SettingsError, match="SI_JWT_KEYS must be 'kid:key"):
        Settings.from_env({"SI_JWT_KEYS": OLD})
    with pytest.raises(SettingsError, match="SI_JWT_KEYS with RS256 needs kid:PEM"):
        Settings.from_env({"SI_JWT_ALGORITHM": "RS256", "SI_JWT_KEYS": "k1:/nowhere.pem"})
    parsed = Settings.from_env({"SI_JWT_KEYS": f" k1:{OLD} , k2:{NEW} "})
    assert parsed.jwt_keys == (("k1", OLD), ("k2", NEW))
    assert OLD not in repr(parsed)


# -- refresh tokens ---------------------------------------------------------------


def test_refresh_token_gets_a_new_access_token(settings):
    client = _app(settings, jwt_expires=300, jwt_refresh_expires=7200,
                  jwt_keys=(("k1", OLD),))
    body = _token(client, "carol")
    assert body["expires_in"] == 300 and body["refresh_expires_in"] == 7200
    refresh = body["refresh_token"]
    claims = pyjwt.decode(refresh, OLD, algorithms=["HS256"])
    assert claims["type"] == "refresh" and claims["exp"] - claims["iat"] == 7200
    assert pyjwt.get_unverified_header(refresh)["kid"] == "k1"

    res = client.post("/api/token/refresh", headers={"Authorization": f"Bearer {refresh}"})
    assert res.status_code == 200
    fresh = res.get_json()
    assert fresh["token_type"] == "Bearer" and fresh["expires_in"] == 300
    access = pyjwt.decode(fresh["access_token"], OLD, algorithms=["HS256"])
    assert access["sub"] == "carol" and access["type"] == "access"
    assert access["exp"] - access["iat"] == 300
    assert _session(client, fresh["access_token"]).status_code == 200


def test_refresh_and_access_tokens_are_not_interchangeable(client):
    body = _token(client)
    res = client.post("/api/chat", json={"message": "你好"},
                      headers={"Authorization": f"Bearer {body['refresh_token']}"})
    assert _error(res) == (401, "invalid_token")
    assert _error(_session(client, body["refresh_token"])) == (401, "invalid_token")
    res = client.post("/api/token/refresh",
                      headers={"Authorization": f"Bearer {body['access_token']}"})
    assert _error(res) == (401, "invalid_token")
    assert _error(client.post("/api/token/refresh")) == (401, "missing_token")


def test_expired_or_rotated_out_refresh_token_is_refused(settings):
    client = _app(settings, jwt_keys=(("k1", OLD), ("k2", NEW)))
    now = int(time.time())
    expired = pyjwt.encode({**_claims(), "type": "refresh", "iat": now - 100, "nbf": now - 100,
                            "exp": now - 50}, OLD, algorithm="HS256", headers={"kid": "k1"})
    res = client.post("/api/token/refresh", headers={"Authorization": f"Bearer {expired}"})
    assert _error(res) == (401, "token_expired")
    refresh = _token(client)["refresh_token"]  # signed by k1
    after = _app(settings, jwt_keys=(("k2", NEW),))
    res = after.post("/api/token/refresh", headers={"Authorization": f"Bearer {refresh}"})
    assert _error(res) == (401, "invalid_token")


def test_refresh_exists_where_tokens_are_issued(settings):
    prod = settings.replace(auth_mode="prod", jwt_secret=OLD)
    client = create_app(prod).test_client()
    refresh = pyjwt.encode({**_claims(), "type": "refresh"}, OLD, algorithm="HS256")
    res = client.post("/api/token/refresh", headers={"Authorization": f"Bearer {refresh}"})
    assert _error(res) == (404, "not_found")

    gated = create_app(prod.replace(gateway_clients=(("portal", "p" * 20),))).test_client()
    body = gated.post("/api/token", json={"user_id": "dan"}, auth=("portal", "p" * 20)).get_json()
    res = gated.post("/api/token/refresh",
                     headers={"Authorization": f"Bearer {body['refresh_token']}"})
    assert res.status_code == 200 and _session(gated, res.get_json()["access_token"]).status_code == 200


# -- Verified tokens remembered across requests (server.identity.CachingJWTManager) ----------


def _manager(client):
    return client.application.extensions["flask-jwt-extended"]


def test_a_verified_token_is_remembered_for_the_next_request(client):
    token = _token(client)["access_token"]
    before = _manager(client).verified_tokens()
    for _ in range(3):
        assert _session(client, token).status_code == 200
    after = _manager(client).verified_tokens()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)
    assert after.maxsize == VERIFIED_TOKENS


def test_a_remembered_token_still_expires(client, settings):
    token = pyjwt.encode(_claims(lifetime=2), settings.jwt_secret, algorithm="HS256")
    assert _session(client, token).status_code == 200  # verified and remembered
    time.sleep(max(0.0, pyjwt.decode(token, options={"verify_signature": False})["exp"]
                   - time.time()) + 0.05)
    assert _error(_session(client, token)) == (401, "token_expired")
    assert _error(_session(client, token)) == (401, "token_expired")  # and stays so


def test_a_changed_copy_of_a_remembered_token_is_refused(client, settings):
    token = _token(client)["access_token"]
    assert _session(client, token).status_code == 200
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged_payload = base64.urlsafe_b64encode(
        json.dumps({**claims, "sub": "mallory"}).encode()).rstrip(b"=").decode()
    other_signature = ("A" if signature[0] != "A" else "B") + signature[1:]
    for forged in (f"{header}.{forged_payload}.{signature}", f"{header}.{payload}.{other_signature}"):
        assert _error(_session(client, forged)) == (401, "invalid_token")
    assert _session(client, token).status_code == 200


def test_remembered_tokens_keep_their_type(client):
    tokens = _token(client)
    refresh = {"Authorization": f"Bearer {tokens['refresh_token']}"}
    access = {"Authorization": f"Bearer {tokens['access_token']}"}
    before = _manager(client).verified_tokens()
    for _ in range(2):  # the second time both come from the cache
        assert _error(_session(client, tokens["refresh_token"])) == (401, "invalid_token")
        assert _session(client, tokens["access_token"]).status_code == 200
        assert _error(client.post("/api/token/refresh", headers=access)) == (401, "invalid_token")
    assert client.post("/api/token/refresh", headers=refresh).status_code == 200
    # A remembered refresh token is still used only once (issue 23.5: rotation).
    assert _error(client.post("/api/token/refresh", headers=refresh)) == (401, "token_reused")
    after = _manager(client).verified_tokens()
    assert after.misses - before.misses == 2  # each token verified once, then remembered
    assert after.hits - before.hits >= 6


def test_a_remembered_token_honours_the_decode_leeway(client, settings):
    client.application.config["JWT_DECODE_LEEWAY"] = timedelta(seconds=30)
    late = pyjwt.encode(_claims(lifetime=-5), settings.jwt_secret, algorithm="HS256")
    for _ in range(2):  # verified by PyJWT with the leeway, then from the cache with it
        assert _session(client, late).status_code == 200
    client.application.config["JWT_DECODE_LEEWAY"] = 2
    assert _error(_session(client, late)) == (401, "token_expired")


def test_a_fractional_exp_ends_where_pyjwt_ends_it(client, settings):
    """PyJWT compares int(exp): a cached token must not outlive that by the fraction."""
    exp = int(time.time()) + 2
    token = pyjwt.encode({**_claims(), "exp": exp + 0.9}, settings.jwt_secret, algorithm="HS256")
    assert _session(client, token).status_code == 200
    time.sleep(max(0.0, exp - time.time()) + 0.05)
    assert _error(_session(client, token)) == (401, "token_expired")
