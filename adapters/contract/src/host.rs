//! Host side: load a plugin, check its ABI version before anything else, create an instance,
//! and wrap it back into [`Adapter`]. Libraries are leaked on purpose, never unloaded: code
//! and data of a plugin may still be referenced (thread-locals, in-flight calls).

use std::{
    ffi::c_void,
    path::{Path, PathBuf},
};

use serde::{de::DeserializeOwned, Serialize};

use crate::{
    abi::{self, AbiVersionFn, CallFn, CreateFn, DestroyFn, FreeFn, Op, TnsBuf},
    Account, Adapter, AdapterError, AdapterResult, AllowList, AllowListRequest, CheckRequest, CodeList,
    CodeListsRequest, Credentials, CredentialsCheck, Description, Document, Finding, InspectRequest, Notification,
    Observed, Problem, ReportRequest, Step, Work,
};

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot load the library: {source}")]
    Open { path: PathBuf, source: libloading::Error },
    #[error("{path}: not a TNS adapter (missing symbol {symbol})")]
    MissingSymbol { path: PathBuf, symbol: &'static str },
    #[error(
        "{path}: adapter ABI version {found}, this host speaks version {expected}; rebuild the plugin against this TNS"
    )]
    AbiMismatch { path: PathBuf, found: u32, expected: u32 },
    #[error("{path}: the adapter refused its configuration: {error}")]
    Create { path: PathBuf, error: AdapterError },
    #[error("{path}: {error}")]
    Describe { path: PathBuf, error: AdapterError },
    #[error("{path}: another library, {first}, already is the adapter `{name}`")]
    Duplicate { path: PathBuf, name: String, first: PathBuf },
    #[error("{path}: unusable description: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("{path}: another library, {first}, already is the default adapter")]
    SecondDefault { path: PathBuf, first: PathBuf },
}

impl LoadError {
    /// The operator's configuration is wrong (the plugin refused it): the process must not
    /// start without the downstream it was configured for.
    pub fn is_configuration(&self) -> bool {
        matches!(self, LoadError::Create { error: AdapterError::Configuration(_), .. })
    }
}

/// A plugin instance behind the [`Adapter`] trait.
pub struct Plugin {
    path: PathBuf,
    description: Description,
    instance: *mut c_void,
    call: CallFn,
    free: FreeFn,
    destroy: DestroyFn,
}

// The plugin contract requires instances usable from any thread at once (`Adapter: Send + Sync`
// on the plugin side); the raw pointer is only ever passed back to the plugin.
unsafe impl Send for Plugin {}
unsafe impl Sync for Plugin {}

impl Drop for Plugin {
    fn drop(&mut self) {
        // SAFETY: the instance came from this library's create and is not used after this.
        unsafe { (self.destroy)(self.instance) }
    }
}

fn symbol<T: Copy>(lib: &'static libloading::Library, path: &Path, name: &'static str) -> Result<T, LoadError> {
    // SAFETY: the symbol's type is fixed by the ABI; the library is never unloaded.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| LoadError::MissingSymbol { path: path.to_path_buf(), symbol: name })
}

/// The largest answer a plugin may hand over (a report PDF is the largest thing expected).
const MAX_ANSWER: usize = 64 << 20;

/// Take a buffer the plugin filled, copying its bytes and handing it back to be freed. A
/// buffer whose length exceeds its own capacity (or any sane size) is not read: the plugin is
/// broken, and trusting its length would read memory it does not own.
fn take(free: FreeFn, buf: TnsBuf) -> Result<Vec<u8>, AdapterError> {
    if buf.ptr.is_null() {
        return Ok(Vec::new());
    }
    let sane = buf.len <= buf.cap && buf.len <= MAX_ANSWER;
    // SAFETY: when sane, the plugin gave `len` initialized bytes at `ptr`; it frees them below, once.
    let bytes = sane.then(|| unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) }.to_vec());
    unsafe { free(buf) };
    bytes.ok_or_else(|| AdapterError::Transient("the adapter returned a buffer longer than it allocated".into()))
}

impl Plugin {
    /// Load the plugin at `path` and create an instance with `config` (JSON).
    pub fn load(path: &Path, config: &serde_json::Value) -> Result<Plugin, LoadError> {
        let path = path.to_path_buf();
        // SAFETY: loading runs the library's initializers; plugins are trusted code shipped
        // with TNS, loaded from the operator's configured directory.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|source| LoadError::Open { path: path.clone(), source })?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        let version: AbiVersionFn = symbol(lib, &path, "tns_adapter_abi_version")?;
        // SAFETY: a plain function of no arguments returning u32.
        let found = unsafe { version() };
        if found != abi::ABI_VERSION {
            return Err(LoadError::AbiMismatch { path, found, expected: abi::ABI_VERSION });
        }
        let create: CreateFn = symbol(lib, &path, "tns_adapter_create")?;
        let destroy: DestroyFn = symbol(lib, &path, "tns_adapter_destroy")?;
        let call: CallFn = symbol(lib, &path, "tns_adapter_call")?;
        let free: FreeFn = symbol(lib, &path, "tns_adapter_free")?;
        let cfg = serde_json::to_vec(config).unwrap_or_default();
        let mut err = TnsBuf::EMPTY;
        // SAFETY: cfg is valid for its length; err is a writable out-parameter.
        let instance = unsafe { create(cfg.as_ptr(), cfg.len(), &mut err) };
        if instance.is_null() {
            let error = take(free, err)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_else(|| AdapterError::Configuration("creation failed without a reason".into()));
            return Err(LoadError::Create { path, error });
        }
        let mut plugin = Plugin { path, description: Description::default(), instance, call, free, destroy };
        plugin.description = plugin
            .invoke(Op::Describe, &())
            .map_err(|error| LoadError::Describe { path: plugin.path.clone(), error })?;
        plugin.description.check().map_err(|reason| LoadError::Invalid { path: plugin.path.clone(), reason })?;
        Ok(plugin)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// [`Self::invoke`] for a request carrying `given` credentials: the values of the fields
    /// the plugin describes as secret are masked in its error, whatever the plugin does. An
    /// error may echo the request it failed on, and errors are logged, stored with the
    /// attempt, and shown to operators and tenants.
    fn invoke_with<Req: Serialize, Res: DeserializeOwned>(
        &self,
        op: Op,
        req: &Req,
        given: Option<&Credentials>,
    ) -> AdapterResult<Res> {
        let result = self.invoke(op, req);
        let Some(given) = given else { return result };
        result.map_err(|e| {
            let secret = self.description.credentials.iter().filter(|f| f.secret);
            e.map_message(|m| mask(m, secret.filter_map(|f| given.get(&f.name))))
        })
    }

    fn invoke<Req: Serialize, Res: DeserializeOwned>(&self, op: Op, req: &Req) -> AdapterResult<Res> {
        let input =
            serde_json::to_vec(req).map_err(|e| AdapterError::Permanent(format!("cannot encode the request: {e}")))?;
        let mut out = TnsBuf::EMPTY;
        // SAFETY: instance came from this library; input is valid for its length; out is writable.
        let status = unsafe { (self.call)(self.instance, op as u32, input.as_ptr(), input.len(), &mut out) };
        let bytes = take(self.free, out)?;
        let bad = |e: serde_json::Error| AdapterError::Transient(format!("the adapter answered malformed JSON: {e}"));
        if status == abi::STATUS_OK {
            serde_json::from_slice(&bytes).map_err(bad)
        } else {
            Err(serde_json::from_slice(&bytes).map_err(bad)?)
        }
    }
}

impl Adapter for Plugin {
    fn describe(&self) -> Description {
        self.description.clone()
    }
    fn advance(&self, n: &Notification) -> AdapterResult<Step> {
        self.invoke_with(Op::Advance, n, n.credentials.as_ref())
    }
    fn reconcile(&self, n: &Notification) -> AdapterResult<Step> {
        self.invoke_with(Op::Reconcile, n, n.credentials.as_ref())
    }
    fn verify_credentials(&self, req: &CredentialsCheck) -> AdapterResult<Account> {
        self.invoke_with(Op::VerifyCredentials, req, Some(&req.credentials))
    }
    fn report(&self, req: &ReportRequest) -> AdapterResult<Document> {
        self.invoke_with(Op::Report, req, req.credentials.as_ref())
    }
    fn allow_list(&self, req: &AllowListRequest) -> AdapterResult<AllowList> {
        self.invoke_with(Op::AllowList, req, Some(&req.credentials))
    }
    fn check(&self, req: &CheckRequest) -> AdapterResult<Option<Finding>> {
        self.invoke_with(Op::Check, req, req.credentials.as_ref())
    }
    fn code_lists(&self, req: &CodeListsRequest) -> AdapterResult<Vec<CodeList>> {
        self.invoke_with(Op::CodeLists, req, req.credentials.as_ref())
    }

    fn inspect(&self, req: &InspectRequest) -> AdapterResult<Option<Observed>> {
        self.invoke_with(Op::Inspect, req, req.credentials.as_ref())
    }
    fn screen(&self, work: &Work) -> AdapterResult<Vec<Problem>> {
        self.invoke(Op::Screen, work)
    }
}

/// `text` with every value in `secrets` replaced by `***`, the longest first (so a secret that
/// holds another is not left half shown).
fn mask<'a>(mut text: String, secrets: impl Iterator<Item = &'a str>) -> String {
    let mut secrets: Vec<&str> = secrets.filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for s in secrets {
        if text.contains(s) {
            text = text.replace(s, "***");
        }
    }
    text
}

/// The platform's file name of a plugin crate's library (`libtns_adapter_sandbox.so`).
pub fn library_file(crate_name: &str) -> String {
    let stem = crate_name.replace('-', "_");
    format!("{}{stem}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// The adapter name a library's file promises (`libtns_adapter_sandbox.so` → `sandbox`).
pub fn name_of_file(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    stem.rsplit_once("tns_adapter_").map(|(_, n)| n)
}

/// Every adapter library in `dir` (files named `*tns_adapter_<name>` with the platform's
/// suffix), each created with `config_for(name)` and required to describe itself as `name`:
/// the successes and the failures, each failure with its reason.
pub fn load_dir(
    dir: &Path,
    config_for: impl Fn(&str) -> crate::PluginConfig,
) -> std::io::Result<(Vec<Plugin>, Vec<LoadError>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| name_of_file(p).is_some())
        .collect();
    files.sort();
    let (mut ok, mut failed) = (vec![], vec![]);
    for f in files {
        let name = name_of_file(&f).unwrap_or_default().to_string();
        let config = serde_json::to_value(config_for(&name)).unwrap_or_default();
        match Plugin::load(&f, &config) {
            Ok(p) if p.description.name != name => failed.push(LoadError::Invalid {
                reason: format!(
                    "the file promises adapter `{name}`, the library describes itself as `{}`",
                    p.description.name
                ),
                path: f,
            }),
            Ok(p) => ok.push(p),
            Err(e) => failed.push(e),
        }
    }
    Ok((ok, failed))
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn secrets_are_masked_longest_first_and_empty_ones_ignored() {
        let text = "login pass-word-2 refused (pass-word tried, user 42)".to_string();
        assert_eq!(
            mask(text, ["pass-word", "pass-word-2", ""].into_iter()),
            "login *** refused (*** tried, user 42)",
            "a secret holding another is masked whole, and an empty one matches nothing"
        );
        assert_eq!(mask("nothing to hide".into(), ["s3cret"].into_iter()), "nothing to hide");
    }
}
