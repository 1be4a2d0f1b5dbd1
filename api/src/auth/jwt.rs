//! Access tokens from `/auth/token`: HS256 JWTs naming their key, so a token dies with it.

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use tns_core::{
    ids::{KeyId, UserId},
    scopes::Scopes,
};

pub const TOKEN_TTL_SECS: i64 = 86_400;
const ISSUER: &str = "tns";

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The user the key belongs to.
    pub sub: String,
    pub org: i64,
    /// The API key the token was minted from; checked on every use.
    pub kid: i64,
    pub scope: String,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
}

pub struct Jwt {
    enc: EncodingKey,
    dec: DecodingKey,
    validation: Validation,
}

impl Jwt {
    pub fn new(secret: &[u8]) -> Jwt {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 5;
        Jwt { enc: EncodingKey::from_secret(secret), dec: DecodingKey::from_secret(secret), validation }
    }

    pub fn mint(&self, user_id: UserId, org_id: i64, key_id: KeyId, scopes: Scopes) -> anyhow::Result<String> {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            sub: user_id.to_string(),
            org: org_id,
            kid: key_id.get(),
            scope: scopes.to_string(),
            iat: now,
            exp: now + TOKEN_TTL_SECS,
            iss: ISSUER.into(),
        };
        Ok(encode(&Header::new(Algorithm::HS256), &claims, &self.enc)?)
    }

    pub fn verify(&self, token: &str) -> Option<Claims> {
        decode::<Claims>(token, &self.dec, &self.validation).ok().map(|d| d.claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_wrong_secret() {
        let a = Jwt::new(&[7u8; 32]);
        let t = a.mint(UserId(1), 2, KeyId(3), Scopes::all()).unwrap();
        let c = a.verify(&t).unwrap();
        assert_eq!((c.org, c.kid, c.exp - c.iat), (2, 3, TOKEN_TTL_SECS));
        assert!(Jwt::new(&[8u8; 32]).verify(&t).is_none());
        assert!(a.verify("garbage").is_none());
    }
}
