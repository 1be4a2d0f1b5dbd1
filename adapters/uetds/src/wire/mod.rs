//! The SOAP wire layer: U-ETDS's messages as typed structs, the envelope around them, the
//! parsing of replies, and the HTTP transport.
//!
//! U-ETDS speaks SOAP 1.1, document/literal wrapped, in the namespace [`NAMESPACE`] (the WSDLs
//! and XSDs in `adapters/uetds/schema/`). Only the operation's wrapper element is qualified;
//! every element inside it is unqualified (the schemas have no `elementFormDefault`), so the
//! structs here carry plain local names. Messages are (de)serialized with quick-xml's serde
//! support, never assembled as text, so names such as `Öz & Şirket <A.Ş.>` are escaped right.
//!
//! Each request struct implements [`Operation`], which ties it to its wrapper element, its
//! SOAPAction and the type of its `<return>`. Fields follow the XSD's order (the schemas use
//! `xs:sequence`); `minOccurs="0"` fields are `Option`s left out when `None`; repeated elements
//! are `Vec`s without a wrapper element. Return types accept replies that leave optional
//! elements out (`None`, empty `Vec`) and ignore elements they do not know, so a service that
//! grows fields keeps working; an element the XSD requires (`sonucKodu` above all) must be
//! there, so a truncated reply never reads as code 0. Parameters of the wrapper elements
//! themselves are required here even where the XSD says `minOccurs="0"`: JAX-WS marks every
//! non-primitive parameter that way, and the service needs them all.
//!
//! `sonucKodu` is not interpreted here: return types carry it for the caller to judge.

pub mod arizi;
pub mod esya;
pub mod redact;
pub mod soap;
pub mod transport;

use std::fmt;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

pub use redact::Secrets;
pub use soap::{envelope, envelope_dynamic, parse_reply, parse_return, CallError};
pub use transport::{Transport, TransportSettings};

/// The target namespace of every U-ETDS service.
pub const NAMESPACE: &str = "http://uetds.unetws.udhb.gov.tr/";

/// One SOAP operation: the request struct is the content of the Body's wrapper element.
pub trait Operation: Serialize {
    /// The wrapper element's local name, e.g. `seferEkle`.
    const NAME: &'static str;
    /// The `soapAction` of the WSDL binding (may be empty).
    const ACTION: &'static str;
    /// The content of the reply's `<return>` (or of the bare reply element, see [`Reply`]).
    type Return: DeserializeOwned;
    /// Where the answer sits in the reply's Body.
    const REPLY: Reply = Reply::Wrapped;
}

/// The shape of a reply's Body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `<NAMEResponse><return>…</return></NAMEResponse>` (document/literal wrapped).
    Wrapped,
    /// The answer is the text or content of this element itself (document/literal bare, as
    /// the arızi service's `servisTest`).
    Bare(&'static str),
}

/// The web-service credentials every operation but `kullaniciKontrol` and `servisTest`
/// carries as its first element (`uetdsYtsUser`). The same pair authenticates the HTTP request.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WsUser {
    /// The firm's UNET number.
    #[serde(rename = "kullaniciAdi")]
    pub kullanici_adi: String,
    pub sifre: String,
}

impl WsUser {
    pub fn new(kullanici_adi: impl Into<String>, sifre: impl Into<String>) -> WsUser {
        WsUser { kullanici_adi: kullanici_adi.into(), sifre: sifre.into() }
    }
}

impl fmt::Debug for WsUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsUser").field("kullanici_adi", &self.kullanici_adi).field("sifre", &"***").finish()
    }
}

messages! {
    /// `uetdsGenelIslemSonuc`: the plain outcome most writes return (both services).
    GenelIslemSonuc: Default { sonuc_kodu: i32, sonuc_mesaji: Option<String> }
    /// `uetdsGenelPdfSonuc`: a report as a PDF, base64 text in `sonucPdf` (both services).
    GenelPdfSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        /// `xs:base64Binary`, still encoded.
        sonuc_pdf: Option<String>,
    }
}

/// `impl Operation` for request structs: `op!(Struct, "element", "action", Return)`.
macro_rules! op {
    ($ty:ty, $name:literal, $action:expr, $ret:ty) => {
        impl $crate::wire::Operation for $ty {
            const NAME: &'static str = $name;
            const ACTION: &'static str = $action;
            type Return = $ret;
        }
    };
}
use op;

/// [`op!`] for the operations whose SOAPAction is a path followed by the element name (the WSDL
/// bindings' rule): each path once, then one `Struct "element" -> Return,` per operation.
macro_rules! operations {
    ($($path:literal { $($ty:ident $name:literal -> $ret:ty),* $(,)? })*) => {
        $($($crate::wire::op!($ty, $name, concat!($path, $name), $ret);)*)*
    };
}
use operations;

/// The message types, each written as `Name { field: Type, … }` (or `Name: Default { … }` to
/// derive `Default` too): a `pub struct` with `pub` fields in the order given (the XSD's),
/// named in camelCase on the wire, deriving `Debug, Clone, PartialEq, Eq, Serialize,
/// Deserialize`. An `Option` field is left out when `None` (`minOccurs="0"`); a `Vec` field
/// reads as empty when absent. Docs and other attributes (`#[serde(rename = …)]`) pass through.
macro_rules! messages {
    // One field at a time, into the accumulated body `[$($done)*]`.
    (@fields $head:tt [$($done:tt)*] $(#[$fa:meta])* $f:ident : Option<$t:ty> $(, $($rest:tt)*)?) => {
        $crate::wire::messages!(@fields $head [
            $($done)* $(#[$fa])* #[serde(skip_serializing_if = "Option::is_none")] pub $f: Option<$t>,
        ] $($($rest)*)?);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$fa:meta])* $f:ident : Vec<$t:ty> $(, $($rest:tt)*)?) => {
        $crate::wire::messages!(@fields $head [$($done)* $(#[$fa])* #[serde(default)] pub $f: Vec<$t>,] $($($rest)*)?);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$fa:meta])* $f:ident : $t:ty $(, $($rest:tt)*)?) => {
        $crate::wire::messages!(@fields $head [$($done)* $(#[$fa])* pub $f: $t,] $($($rest)*)?);
    };
    (@fields [$(#[$attr:meta])* $name:ident [$($extra:ident),*]] [$($done:tt)*]) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize $(, $extra)*)]
        #[serde(rename_all = "camelCase")]
        pub struct $name { $($done)* }
    };
    ($($(#[$attr:meta])* $name:ident $(: $($extra:ident),+)? { $($fields:tt)* })*) => {
        $($crate::wire::messages!(@fields [$(#[$attr])* $name [$($($extra),+)?]] [] $($fields)*);)*
    };
}
use messages;

#[cfg(test)]
mod tests;
