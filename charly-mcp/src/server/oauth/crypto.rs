//! The signature checks of access tokens: a `jsonwebtoken` [`CryptoProvider`] that verifies
//! RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 section 3.3) and ES256 (ECDSA P-256 with
//! SHA-256, section 3.4) and nothing else.
//!
//! Hand-written instead of `jsonwebtoken`'s `rust_crypto` feature, for size: that provider
//! also links every signer and P-384, Ed25519 and RSA-PSS, which a resource server never
//! uses. RS256 is what OpenID Connect requires of every provider (OpenID Connect Discovery,
//! `id_token_signing_alg_values_supported`) and what Keycloak, Auth0, Entra ID, Okta and
//! Google sign access tokens with by default; ES256 is the common elliptic-curve choice. The
//! maths is RustCrypto's (`rsa`, `p256`), on the SHA-2 already in the tree for HMAC.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};

/// The algorithms an access token may be signed with.
pub(crate) const ALGORITHMS: [Algorithm; 2] = [Algorithm::RS256, Algorithm::ES256];

/// Verification of [`ALGORITHMS`] only; signing always fails.
pub(crate) static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils::new_unimplemented(),
};

/// Makes [`PROVIDER`] the process's provider, unless one is installed already (a host that
/// installed its own keeps it).
pub(crate) fn install() {
    let _ = PROVIDER.install_default();
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::Provider("charly's resource server verifies tokens; it signs none".into()).into())
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    match (algorithm, key.kind()) {
        (Algorithm::RS256, DecodingKeyKind::RsaModulusExponent { n, e }) => {
            let key = rsa::PublicKey::new(
                rsa::BoxedUint::from_be_slice_vartime(n),
                rsa::BoxedUint::from_be_slice_vartime(e),
            )
            .map_err(|e| Error::from(ErrorKind::InvalidRsaKey(e.to_string())))?;
            Ok(Box::new(Rs256(rsa::pkcs1v15::VerifyingKey::new(key))))
        }
        (Algorithm::ES256, DecodingKeyKind::SecretOrDer(point)) => {
            let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(point)
                .map_err(|_| Error::from(ErrorKind::InvalidEcdsaKey))?;
            Ok(Box::new(Es256(key)))
        }
        (Algorithm::RS256 | Algorithm::ES256, _) => Err(ErrorKind::InvalidKeyFormat.into()),
        _ => Err(ErrorKind::UnsupportedAlgorithm.into()),
    }
}

struct Rs256(rsa::pkcs1v15::VerifyingKey<sha2::Sha256>);

impl Verifier<Vec<u8>> for Rs256 {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        let signature = rsa::pkcs1v15::Signature::try_from(signature.as_slice())?;
        rsa::signature::Verifier::verify(&self.0, message, &signature).map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for Rs256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::RS256
    }
}

struct Es256(p256::ecdsa::VerifyingKey);

impl Verifier<Vec<u8>> for Es256 {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        // JWS carries R || S, 64 bytes (RFC 7518 section 3.4), not DER.
        let signature = p256::ecdsa::Signature::from_slice(signature).map_err(|_| signature::Error::new())?;
        self.0.verify(message, &signature).map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for Es256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::ES256
    }
}
