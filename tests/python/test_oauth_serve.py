"""`charly mcp serve --oauth-issuer` logged in to by the official Python MCP SDK's OAuth client.

A small authorization server on 127.0.0.1 (this file: RFC 8414 metadata, dynamic client
registration, an authorization endpoint that approves at once and redirects with a code, a
token endpoint checking PKCE, a JWKS with a P-256 key generated for the run; tokens are JWTs
signed with PyJWT) issues what the SDK asks for. The SDK finds it from the server's 401 alone,
gets a token with the scope the challenge names (`mcp:read`), reads, is refused a writing
tool with 403 `insufficient_scope`, steps up to `mcp:read mcp:write` and writes.
"""
import asyncio
import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from conftest import charly_bin, clean_env, free_port, running


def b64(n: int, size: int) -> str:
    return base64.urlsafe_b64encode(n.to_bytes(size, "big")).rstrip(b"=").decode()


class Issuer:
    """The authorization server; `scopes` records the scope of every token it issued."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.codes: dict[str, dict] = {}
        self.scopes: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def handler(self):
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status: int, body: dict | None = None, headers: dict | None = None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def form(self) -> dict:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    return json.loads(raw)
                return {k: v[0] for k, v in urllib.parse.parse_qs(raw).items()}

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                if url.path == "/.well-known/oauth-authorization-server":
                    u = issuer.url
                    self.reply(200, {
                        "issuer": u, "authorization_endpoint": f"{u}/authorize", "token_endpoint": f"{u}/token",
                        "registration_endpoint": f"{u}/register", "jwks_uri": f"{u}/jwks",
                        "response_types_supported": ["code"], "grant_types_supported": ["authorization_code"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                        "scopes_supported": ["mcp:read", "mcp:write"],
                    })
                elif url.path == "/jwks":
                    numbers = issuer.key.public_key().public_numbers()
                    self.reply(200, {"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "k1",
                                               "x": b64(numbers.x, 32), "y": b64(numbers.y, 32)}]})
                elif url.path == "/authorize":
                    # Approves at once: the user said yes.
                    q = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
                    code = secrets.token_urlsafe(16)
                    issuer.codes[code] = q
                    target = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
                    self.reply(302, None, {"Location": target})
                else:
                    self.reply(404, {"error": "not_found"})

            def do_POST(self):
                if self.path == "/register":
                    meta = self.form()
                    self.reply(201, {**meta, "client_id": "client-" + secrets.token_hex(4),
                                     "token_endpoint_auth_method": "none"})
                elif self.path == "/token":
                    form = self.form()
                    asked = issuer.codes.pop(form.get("code", ""), None)
                    verifier = form.get("code_verifier", "").encode()
                    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                    if asked is None or challenge != asked.get("code_challenge"):
                        self.reply(400, {"error": "invalid_grant"})
                        return
                    scope = asked.get("scope", "")
                    issuer.scopes.append(scope)
                    now = int(time.time())
                    claims = {"iss": issuer.url, "aud": asked.get("resource") or form.get("resource"),
                              "sub": "alice", "client_id": asked["client_id"], "scope": scope,
                              "iat": now, "exp": now + 300}
                    token = jwt.encode(claims, issuer.key, algorithm="ES256", headers={"kid": "k1", "typ": "at+jwt"})
                    self.reply(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300, "scope": scope})
                else:
                    self.reply(404, {"error": "not_found"})

        return Handler


class Memory:
    """Token storage in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_the_python_sdk_logs_in_reads_steps_up_and_writes(tmp_path):
    issuer = Issuer()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    (tmp_path / "home").mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    cmd = [charly_bin(), "-C", str(project), "mcp", "serve", "--listen", f"127.0.0.1:{port}",
           "--oauth-issuer", issuer.url]
    redirects: list[str] = []

    async def follow(authorization_url: str) -> None:
        # The browser's part: the authorization server redirects back with the code.
        request = urllib.request.Request(authorization_url)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        try:
            urllib.request.build_opener(NoRedirect).open(request)
        except urllib.error.HTTPError as answer:
            redirects.append(answer.headers["Location"])

    async def callback() -> AuthorizationCodeResult:
        q = urllib.parse.parse_qs(urllib.parse.urlparse(redirects[-1]).query)
        return AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0])

    async def run():
        auth = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(client_name="pytest", redirect_uris=["http://127.0.0.1:1/callback"],
                                                grant_types=["authorization_code"], token_endpoint_auth_method="none"),
            storage=Memory(),
            redirect_handler=follow,
            callback_handler=callback,
        )
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    version = await session.call_tool("version", {})
                    assert not version.is_error, text(version)
                    assert issuer.scopes == ["mcp:read"], issuer.scopes
                    assert not (project / "charly.yml").exists()
                    created = await session.call_tool("box.new.project", {"dir": "."})
                    assert not created.is_error, text(created)
        # Two logins: the first with the scope of the 401, the second stepped up after the 403.
        assert len(redirects) == 2, redirects
        assert issuer.scopes[1].split() == ["mcp:read", "mcp:write"], issuer.scopes

    try:
        with running(cmd, port, env=clean_env(tmp_path)) as proc:
            asyncio.run(run())
            assert (project / "charly.yml").is_file()
            proc.terminate()
            err = proc.stderr.read().decode()
            assert f"accepting OAuth access tokens from {issuer.url} for {url}" in err, err
    finally:
        issuer.stop()
