//! One login ([`OAuthHttp::run`]): discovery, the client (the one this session or an earlier
//! run registered, on the loopback port it was registered with, else a new registration), the
//! authorization step and the token request; once more with a new registration when the
//! authorization server refuses a client charly registered earlier.

use std::sync::atomic::Ordering;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::client::{KeptClient, token_error_code};
use super::flow::{OAuthHttp, Slot, failure, token_failure};
use super::login::bind_loopback;
use super::{Interaction, OAuthOptions};

type Error = StreamableHttpError<reqwest::Error>;

/// A login step that failed; `client`: why, when the authorization server refused the client
/// itself (see [`super::client::refuses_client`]), which a new registration may mend.
pub(super) struct Failed {
    pub(super) error: Error,
    pub(super) client: Option<String>,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed { error, client: None }
    }
}

/// The authorization server a metadata document names: (issuer, token endpoint).
fn server_of(metadata: &AuthorizationMetadata) -> (String, String) {
    (metadata.issuer.clone().unwrap_or_default(), metadata.token_endpoint.clone())
}

/// Whether rmcp takes the client ID metadata document (SEP-991) given in `options` as the
/// client: the authorization server says it supports such documents and no client id is given
/// (rmcp's order: a pre-registered client, a metadata document, a registration).
fn uses_metadata_document(options: &OAuthOptions, metadata: &AuthorizationMetadata) -> bool {
    options.client_id.is_none()
        && options.client_metadata_url.is_some()
        && metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
}

impl OAuthHttp {
    /// Discovery, the client (a registration the first time, or when the kept client cannot
    /// be used), the authorization step and the token request.
    pub(super) async fn run(
        &self,
        mut manager: AuthorizationManager,
        slot: &mut Slot,
        challenge: &str,
    ) -> (AuthorizationManager, Result<String, Error>) {
        let server = self.state.server.clone();
        let (mut metadata, mut assumed) = match self.discover(&mut manager, challenge).await {
            Ok(found) => found,
            Err(e) => return (manager, Err(e)),
        };
        let kept = self.state.kept.get();
        // Register anew when the resource moved to another authorization server (its metadata
        // names another issuer or token endpoint: the old client and tokens mean nothing
        // there); when the client was restored from the token cache without the port of its
        // redirect URI (an earlier charly's document, or a client this run does not take):
        // this run can neither know nor listen on it, and a step-up would send the server a
        // redirect_uri that is not charly's (trial finding); when a refresh was refused with
        // invalid_client; or when a client ID metadata document is to be used instead. The
        // fresh manager discovers again, so it knows the challenge's scopes.
        let moved = slot.authorization_server.as_ref().is_some_and(|known| *known != server_of(&metadata));
        let document = kept.is_some() && uses_metadata_document(&self.state.options, &metadata);
        let refused = slot.client_refused.take();
        if slot.registered && (moved || slot.port.is_none() || document || refused.is_some()) {
            if let (Some(why), Some(kept)) = (&refused, &kept) {
                self.notice(&self.refusal(kept, why));
            }
            if let Err(e) = self.start_over(&mut manager, slot, &mut metadata, &mut assumed, challenge).await
            {
                return (manager, Err(e));
            }
        }
        let listener = match bind_loopback(slot.port).await {
            Ok(listener) => listener,
            Err(e) => {
                // The port of the client's redirect URI is taken: a client registered with it
                // cannot log in through another one at servers that hold it to the registered
                // port (RFC 8252 section 7.3 has them allow any; many do not).
                let Some(port) = slot.port else {
                    return (manager, Err(failure(&server, "redirect listener", e)));
                };
                let shown = crate::client::endpoint::redacted(&server);
                self.notice(&match &kept {
                    Some(kept) => format!(
                        "{shown}: the loopback port {port} of the redirect URI that its OAuth client {} was \
                         registered with is taken ({e}): registering a new client",
                        kept.client_id
                    ),
                    None => format!(
                        "{shown}: the loopback port {port} of its login's redirect URI is taken ({e}): this \
                         login redirects to another port"
                    ),
                });
                if let Err(e) =
                    self.start_over(&mut manager, slot, &mut metadata, &mut assumed, challenge).await
                {
                    return (manager, Err(e));
                }
                match bind_loopback(None).await {
                    Ok(listener) => listener,
                    Err(e) => return (manager, Err(failure(&server, "redirect listener", e))),
                }
            }
        };
        let mut retried = false;
        loop {
            // A client charly registered (this session or an earlier run) that the
            // authorization server refuses (it forgot it, or no longer takes its redirect URI)
            // is registered once more, and the login tried once more.
            let reused = if slot.registered { self.state.kept.get() } else { None };
            let (returned, outcome) =
                self.attempt(manager, slot, &metadata, assumed, challenge, &listener).await;
            manager = returned;
            match outcome {
                Ok(token) => return (manager, Ok(token)),
                Err(Failed { client: Some(why), .. }) if !retried && reused.is_some() => {
                    retried = true;
                    if let Some(kept) = &reused {
                        self.notice(&self.refusal(kept, &why));
                    }
                    if let Err(e) =
                        self.start_over(&mut manager, slot, &mut metadata, &mut assumed, challenge).await
                    {
                        return (manager, Err(e));
                    }
                }
                Err(failed) => return (manager, Err(failed.error)),
            }
        }
    }

    /// The notice of a kept client that the authorization server refused.
    fn refusal(&self, kept: &KeptClient, why: &str) -> String {
        format!(
            "{}: its authorization server no longer accepts the OAuth client {} that charly registered \
             ({why}): registering a new client",
            crate::client::endpoint::redacted(&self.state.server),
            kept.client_id
        )
    }

    /// A fresh manager, its metadata discovered again, for a new registration.
    async fn start_over(
        &self,
        manager: &mut AuthorizationManager,
        slot: &mut Slot,
        metadata: &mut AuthorizationMetadata,
        assumed: &mut bool,
        challenge: &str,
    ) -> Result<(), Error> {
        let mut fresh = self.new_manager().await?;
        (*metadata, *assumed) = self.discover(&mut fresh, challenge).await?;
        *manager = fresh;
        slot.registered = false;
        slot.port = None;
        Ok(())
    }

    /// One authorization with the client `slot` says `manager` has (or a new one: a
    /// pre-registered client, a metadata document, or a registration), redirected to
    /// `http://127.0.0.1:PORT/callback`, the port `listener` is bound to.
    async fn attempt(
        &self,
        mut manager: AuthorizationManager,
        slot: &mut Slot,
        metadata: &AuthorizationMetadata,
        assumed: bool,
        challenge: &str,
        listener: &tokio::net::TcpListener,
    ) -> (AuthorizationManager, Result<String, Failed>) {
        let server = self.state.server.clone();
        let options = &self.state.options;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let (authorization_endpoint, token_endpoint) =
            (metadata.authorization_endpoint.clone(), metadata.token_endpoint.clone());
        let auth_methods = metadata.additional_fields.get("token_endpoint_auth_methods_supported").cloned();
        if !slot.registered {
            manager.set_metadata(metadata.clone());
        }
        slot.authorization_server = Some(server_of(metadata));
        let auth_url = if slot.registered {
            let mut scopes = manager.select_scopes(None, &[]);
            // A grant of no scope comes back as `scope: ""`, which rmcp keeps as one empty
            // scope: a step-up then asked for " mcp:admin" (trial finding).
            scopes.retain(|scope| !scope.is_empty());
            for scope in &options.scopes {
                if !scopes.contains(scope) {
                    scopes.push(scope.clone());
                }
            }
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            match manager.get_authorization_url(&refs).await {
                Ok(url) => url,
                Err(e) => return (manager, Err(failure(&server, "authorization request", e).into())),
            }
        } else {
            // The first login asks for what the challenge asked (else the resource's
            // scopes_supported, else none), as the spec selects: rmcp's default would add
            // every scope the resource supports to the challenge's.
            let mut request = AuthorizationRequest::new(redirect_uri.clone())
                .with_client_name(&options.client_name)
                .with_initial_scope_selection();
            if !options.scopes.is_empty() {
                request = request.with_scopes(options.scopes.iter().cloned());
            }
            if let Some(endpoint) = &metadata.registration_endpoint {
                self.wait_for(format!("its authorization server's registration endpoint {endpoint}"));
            }
            let mut registered = None;
            if let Some(id) = &options.client_id {
                request = request.with_preregistered_client(id);
                if let Some(secret) = &options.client_secret {
                    // rmcp sends a secret with client_secret_basic unless the server offers
                    // client_secret_post alone, even to a server that offers only `none`.
                    match super::client::token_auth_method(auth_methods.as_ref()) {
                        Ok("none") => {}
                        Ok(_) => request = request.with_client_secret(secret),
                        Err(why) => {
                            let e = failure(&server, "authorization server metadata", why);
                            return (manager, Err(e.into()));
                        }
                    }
                }
            } else if !uses_metadata_document(options, metadata) {
                // charly registers the client itself (RFC 7591, through rmcp) where rmcp
                // would in the session below, which keeps a secret the registration returns
                // out of reach: the next login reuses the client and needs it.
                let scopes = self.registration_scopes(&manager, metadata).await;
                let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
                match manager.register_client(&options.client_name, &redirect_uri, &refs).await {
                    Ok(config) => {
                        request = request.with_preregistered_client(&config.client_id);
                        if let Some(secret) = &config.client_secret {
                            request = request.with_client_secret(secret);
                        }
                        registered = Some(KeptClient {
                            client_id: config.client_id,
                            redirect_uri: redirect_uri.clone(),
                            client_secret: config.client_secret,
                            issuer: metadata.issuer.clone(),
                            token_endpoint: token_endpoint.clone(),
                        });
                    }
                    Err(e) => {
                        let e = self.registration_failed(challenge, metadata, assumed, &e);
                        return (manager, Err(e.into()));
                    }
                }
            }
            if let Some(url) = &options.client_metadata_url {
                request = request.with_client_metadata_url(url);
            }
            match AuthorizationSession::new(manager, request).await {
                Ok(session) => {
                    slot.registered = true;
                    slot.port = Some(port);
                    // A client given (pre-registered, a metadata document) is not kept: the
                    // next run takes it from its options again.
                    self.state.kept.set(registered);
                    manager = session.auth_manager;
                    session.auth_url
                }
                Err((m, e)) => {
                    let e = self.registration_failed(challenge, metadata, assumed, &e);
                    return (m, Err(e.into()));
                }
            }
        };
        let callback = match options.interaction {
            Interaction::Unattended => {
                self.wait_for(format!(
                    "its authorization server's authorization endpoint {authorization_endpoint} (an \
                     unattended login waits for its redirect)"
                ));
                self.follow(&auth_url, &redirect_uri).await
            }
            Interaction::Terminal => {
                self.wait_for(format!(
                    "the login in the browser at the authorization endpoint {authorization_endpoint}"
                ));
                self.ask_person(&auth_url, &redirect_uri, listener).await.map_err(Failed::from)
            }
        };
        let callback = match callback {
            Ok(callback) => callback,
            Err(e) => return (manager, Err(e)),
        };
        self.wait_for(format!("its authorization server's token endpoint {token_endpoint}"));
        let exchanged = manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await;
        if let Err(e) = exchanged {
            let client = match &e {
                AuthError::TokenExchangeFailed(text) if token_error_code(text) == Some("invalid_client") => {
                    Some("its token endpoint answered invalid_client".to_owned())
                }
                _ => None,
            };
            let error = failure(&server, "token request", token_failure(&token_endpoint, &e));
            return (manager, Err(Failed { error, client }));
        }
        let token = manager.get_access_token().await.map_err(|e| failure(&server, "token request", e).into());
        if token.is_ok() {
            self.state.refused.store(false, Ordering::SeqCst);
        }
        (manager, token)
    }

    /// Why the client could not be had: no OAuth metadata at all (only the default endpoints
    /// assumed, and the default `/register` failed), no PKCE, or the registration's refusal.
    fn registration_failed(
        &self,
        challenge: &str,
        metadata: &AuthorizationMetadata,
        assumed: bool,
        e: &AuthError,
    ) -> Error {
        let server = &self.state.server;
        let text = super::without_rmcp_labels(&e.to_string());
        // No metadata anywhere and the default /register is not there either: the server
        // wants a bearer token and has no OAuth to get one (trial finding: it ended at
        // "client registration ... 404").
        if assumed {
            // The challenge may name a document that did not answer (a 401 of its own).
            let pointed = match super::login::challenge_param(challenge, "resource_metadata") {
                Some(url) => format!(
                    "the resource_metadata its WWW-Authenticate names, {}, gave no JSON document",
                    crate::client::redacted(&url)
                ),
                None => "no resource_metadata in its WWW-Authenticate".to_owned(),
            };
            let why = format!(
                "the server asks for a bearer token but publishes no OAuth metadata ({pointed}, nothing at \
                 /.well-known/oauth-protected-resource or /.well-known/oauth-authorization-server, and the \
                 default {} failed: {}): give --header 'Authorization: Bearer TOKEN'",
                metadata.registration_endpoint.as_deref().unwrap_or("/register"),
                crate::client::plain::summary(&text)
            );
            return failure(server, "discovery", why);
        }
        // rmcp's PkceUnsupported, which a registration error may wrap.
        if text.contains("does not support the required PKCE") {
            let why = "its authorization server does not offer PKCE with S256 (its metadata's \
                       code_challenge_methods_supported), which OAuth 2.1 and the MCP authorization spec \
                       require: charly cannot log in there";
            return failure(server, "authorization server metadata", why);
        }
        // A server that registers no clients on its own may have one registered beforehand.
        let hint = if self.state.options.client_id.is_none() {
            "; if the authorization server registers no clients on its own, register one there and give \
             --oauth-client-id ID (with --oauth-client-secret-env VAR for a confidential client)"
        } else {
            ""
        };
        failure(server, "client registration", format!("{text}{hint}"))
    }

    /// The scopes a registration names, as rmcp selects them for the session that follows:
    /// the ones asked for, else the challenge's (else the resource's `scopes_supported`), with
    /// `offline_access` when the authorization server offers it (SEP-2207).
    async fn registration_scopes(
        &self,
        manager: &AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Vec<String> {
        let asked = &self.state.options.scopes;
        if asked.is_empty() {
            return manager.select_initial_scopes(&[]).await;
        }
        let mut scopes = asked.clone();
        let offline =
            metadata.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if offline && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".to_owned());
        }
        scopes
    }
}
