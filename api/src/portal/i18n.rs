//! The portal's two languages: Turkish (the default) and English, chosen with a cookie. Every
//! message exists in both, by construction ([`Msg`] is one enum, each variant with its two
//! texts), so a page can never show a missing translation.

use axum::http::HeaderMap;

use crate::auth::session::cookie;

/// The cookie that remembers the language (a year).
pub const LANG_COOKIE: &str = "tns_lang";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    Tr,
    En,
}

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::Tr => "tr",
            Lang::En => "en",
        }
    }

    pub fn parse(code: &str) -> Option<Lang> {
        match code {
            "tr" => Some(Lang::Tr),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language a request asks for: its cookie, else Turkish.
    pub fn of(headers: &HeaderMap) -> Lang {
        cookie(headers, LANG_COOKIE).and_then(Lang::parse).unwrap_or_default()
    }

    /// The other one, which the switch offers.
    pub fn other(self) -> Lang {
        match self {
            Lang::Tr => Lang::En,
            Lang::En => Lang::Tr,
        }
    }

    pub fn t(self, m: Msg) -> &'static str {
        m.text(self)
    }
}

macro_rules! messages {
    ($($key:ident => $tr:expr, $en:expr;)*) => {
        /// A text of the portal.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Msg { $($key,)* }

        impl Msg {
            pub fn text(self, lang: Lang) -> &'static str {
                match (self, lang) {
                    $((Msg::$key, Lang::Tr) => $tr, (Msg::$key, Lang::En) => $en,)*
                }
            }
        }
    };
}

messages! {
    Brand => "TNS — Taşıma Bildirim Servisi", "TNS — Transport Notification Service";
    SkipToContent => "İçeriğe geç", "Skip to content";
    Language => "English", "Türkçe";
    MainMenu => "Ana menü", "Main menu";
    Dashboard => "Pano", "Dashboard";
    Journeys => "Seferler", "Journeys";
    Cargo => "Yük", "Cargo";
    Vehicles => "Araçlar", "Vehicles";
    Personnel => "Personel", "Personnel";
    Submissions => "Bildirimler", "Submissions";
    Settings => "Ayarlar", "Settings";
    SignIn => "Giriş yap", "Sign in";
    SignOut => "Çıkış yap", "Sign out";
    Email => "E-posta", "E-mail";
    Password => "Parola", "Password";
    WrongCredentials => "E-posta ya da parola yanlış.", "Wrong e-mail or password.";
    SessionEnds => "Oturum bitişi", "Session ends";
    SignInAgain => "Oturumunuz sona erdi; lütfen yeniden giriş yapın.", "Your session has ended; please sign in again.";
    NotAllowed => "Bu işlem için yetkiniz yok.", "You are not allowed to do this.";
    NotFound => "Aradığınız kayıt bulunamadı.", "The record you are looking for was not found.";
    SomethingWrong => "Beklenmeyen bir hata oluştu; lütfen yeniden deneyin.", "Something went wrong; please try again.";
    TryAgainLater => "Hizmete şu an ulaşılamıyor; biraz sonra yeniden deneyin.", "The service cannot be reached right now; try again shortly.";
    ReloadPage => "Sayfa eskidi; lütfen yenileyip yeniden deneyin.", "The page is out of date; reload it and try again.";
    Suspended => "Hesap askıda", "Account suspended";
    UsageThisMonth => "Bu ayki kullanım", "Usage this month";
    CallsOf => "çağrı, kota", "calls of a quota of";
    Unlimited => "sınırsız", "unlimited";
    SubmissionsLast30 => "Son 30 günün bildirimleri", "Submissions in the last 30 days";
    FailedSubmissions => "Başarısız bildirimler", "Failed submissions";
    NoFailures => "Başarısız bildirim yok.", "No failed submissions.";
    Retry => "Yeniden gönder", "Retry";
    Retried => "Yeniden kuyruğa alındı.", "Queued again.";
    StatePending => "Bekliyor", "Pending";
    StateUnknown => "Belirsiz: sorgulanıyor", "Unknown: being looked up";
    StateDelivered => "İletildi", "Delivered";
    StateFailed => "Başarısız", "Failed";
    When => "Zaman", "When";
    Record => "Kayıt", "Record";
    Message => "Mesaj", "Message";
    New => "Yeni", "New";
    Save => "Kaydet", "Save";
    Cancel => "Vazgeç", "Cancel";
    Edit => "Düzenle", "Edit";
    Delete => "Sil", "Delete";
    ConfirmDelete => "Bu kayıt silinsin mi?", "Delete this record?";
    Saved => "Kaydedildi.", "Saved.";
    Deleted => "Silindi.", "Deleted.";
    FixErrors => "Lütfen işaretli alanları düzeltin.", "Please correct the marked fields.";
    NothingYet => "Henüz kayıt yok.", "Nothing here yet.";
    Next => "Sonraki sayfa", "Next page";
    Actions => "İşlemler", "Actions";
    Required => "zorunlu", "required";
    NewVehicle => "Yeni araç", "New vehicle";
    EditVehicle => "Aracı düzenle", "Edit vehicle";
    NewPerson => "Yeni personel", "New crew member";
    EditPerson => "Personeli düzenle", "Edit crew member";
    Masked => "gizli", "hidden";
    // Team members and passwords.
    Team => "Ekip", "Team";
    Name => "Ad soyad", "Name";
    Role => "Rol", "Role";
    RoleOwner => "Sahip", "Owner";
    RoleAdmin => "Yönetici", "Admin";
    RoleDispatcher => "Operasyon", "Dispatcher";
    RoleViewer => "İzleyici", "Viewer";
    RolesExplained => "Yönetici her şeyi yapar; operasyon sefer, yük, araç ve personeli yönetir ve bildirir; izleyici bildirimleri (kişisel veriler gizli), webhook'ları ve faturaları görür.", "Admins may do everything; dispatchers manage and submit journeys, cargo, vehicles and personnel; viewers see submissions (personal data hidden), webhooks and invoices.";
    Invite => "Davet et", "Invite";
    Remove => "Çıkar", "Remove";
    ConfirmRemove => "Bu kişi ekipten çıkarılsın mı? Oturumları kapanır, oluşturduğu API anahtarları iptal edilir.", "Remove this member? Their sessions end and the API keys they made are revoked.";
    Revoke => "İptal et", "Revoke";
    Until => "son gün", "until";
    OpenInvitations => "Bekleyen davetler", "Open invitations";
    InvitationMade => "Davet oluşturuldu.", "The invitation is made.";
    InvitationMailed => "Bağlantı e-postayla da gönderildi.", "The link was also e-mailed.";
    ShownOnce => "Bu bağlantı yalnızca şimdi gösteriliyor; davet ettiğiniz kişiye iletin:", "This link is shown only now; pass it on to the person you invite:";
    AlreadyHasAccount => "Bu adresin zaten bir hesabı var.", "This address has an account already.";
    InvitationSubject => "TNS ekibine davet", "An invitation to a TNS team";
    InvitationMail => "TNS'te bir ekibe davet edildiniz. Katılmak için bağlantıyı açın:", "You are invited to a team on TNS. Open the link to join:";
    LinkValidDays => "Bağlantı şu kadar gün geçerli:", "The link is valid for this many days:";
    InvitationGone => "Bu davet artık geçerli değil.", "This invitation is no longer valid.";
    JoinTitle => "Ekibe katılın:", "Join the team of";
    Join => "Katıl", "Join";
    ChangePassword => "Parolayı değiştir", "Change password";
    CurrentPassword => "Şu anki parola", "Current password";
    NewPassword => "Yeni parola (en az 8 karakter)", "New password (at least 8 characters)";
    WrongPassword => "Parola yanlış.", "The password is wrong.";
    PasswordChanged => "Parola değiştirildi; diğer oturumlarınız kapandı.", "The password is changed; your other sessions have ended.";
    ForgotPassword => "Parolamı unuttum", "Forgot password";
    SendResetLink => "Sıfırlama bağlantısı gönder", "Send a reset link";
    ResetSent => "Bu adresin bir hesabı varsa, bir sıfırlama bağlantısı gönderildi (bir saat geçerli).", "If the address has an account, a reset link was sent to it (valid for an hour).";
    NoResetHere => "Bu platform e-posta göndermiyor; parolanızı sıfırlamak için kuruluşunuzun sahibine başvurun.", "This platform sends no e-mail; ask your organization's owner to help you reset your password.";
    ResetSubject => "TNS parola sıfırlama", "TNS password reset";
    ResetMail => "Parolanızı sıfırlamak için bu bağlantıyı açın (bir saat içinde, bir kez):", "Open this link to reset your password (within an hour, once):";
    ResetMailNotYou => "Bunu siz istemediyseniz bu iletiyi yok sayın.", "If you did not ask for this, ignore this message.";
    ChooseNewPassword => "Yeni parola belirleyin", "Choose a new password";
    ResetGone => "Bu sıfırlama bağlantısı artık geçerli değil.", "This reset link is no longer valid.";
    // Settings: downstream, API keys, webhooks, billing, support.
    SettingsMenu => "Ayarlar menüsü", "Settings menu";
    Downstream => "U-ETDS bağlantısı", "U-ETDS connection";
    DownstreamIntro => "Bildirimlerinizin nereye gideceğini seçin. Hesap isteyen bir hedefin bilgileri, kaydedilmeden önce o hedefe sorularak denetlenir.", "Choose where your submissions go. A downstream that needs an account checks it before it is saved.";
    DownstreamStart => "İlk adım: kuruluşunuz henüz bir hedef seçmedi; bildirimler aşağıda varsayılan olarak işaretli hedefe gider. Gerçek bildirim için Bakanlığın sistemini seçin.", "First step: your organization has not chosen where submissions go yet; they go to the target marked below as the default. To submit for real, choose the Ministry's system.";
    SubmissionsGoTo => "Bildirimler şuraya gidiyor", "Submissions go to";
    Target => "Hedef", "Target";
    PasswordSet => "kayıtlı", "set";
    LastChanged => "Son değişiklik", "Last changed";
    NotChosenYet => "henüz seçilmedi", "not chosen yet";
    ApiKeys => "API anahtarları", "API keys";
    NewKey => "Yeni API anahtarı", "New API key";
    Scopes => "Yetkiler", "Scopes";
    Created => "Oluşturulma", "Created";
    LastUsed => "Son kullanım", "Last used";
    Prefix => "Ön ek", "Prefix";
    Create => "Oluştur", "Create";
    KeyMade => "Anahtar oluşturuldu. Yalnızca şimdi gösteriliyor; hemen güvenli bir yere kaydedin:", "The key is made. It is shown only now; store it somewhere safe at once:";
    ConfirmRevokeKey => "Bu anahtar iptal edilsin mi? Onu kullanan her şey çalışmayı bırakır.", "Revoke this key? Everything that uses it stops working.";
    Revoked => "İptal edildi.", "Revoked.";
    Webhooks => "Webhook'lar", "Webhooks";
    NewWebhook => "Yeni webhook", "New webhook";
    EndpointUrl => "Adres (URL)", "Endpoint URL";
    EventType => "Olay", "Event";
    Active => "Etkin", "Active";
    Inactive => "Etkin değil", "Inactive";
    Details => "Ayrıntılar", "Details";
    SecretMade => "İmza anahtarı yalnızca şimdi gösteriliyor; alıcınıza hemen kaydedin:", "The signing secret is shown only now; store it with your receiver at once:";
    RotateSecret => "İmza anahtarını yenile", "Rotate the signing secret";
    ConfirmRotate => "İmza anahtarı yenilensin mi? Eskisi 24 saat daha imzalar.", "Rotate the signing secret? The old one keeps signing for 24 hours.";
    SendTestEvent => "Deneme olayı gönder", "Send a test event";
    TestEventSent => "Deneme olayı kuyruğa alındı.", "The test event is queued.";
    Deliveries => "Gönderimler", "Deliveries";
    Delivery => "Gönderim", "Delivery";
    Attempts => "Denemeler", "Attempts";
    Outcome => "Sonuç", "Outcome";
    ResponseStatus => "Yanıt kodu", "Response status";
    Duration => "Süre (ms)", "Duration (ms)";
    Payload => "Gönderilen içerik", "Payload";
    Billing => "Faturalandırma", "Billing";
    CurrentPlan => "Geçerli plan", "Current plan";
    Status => "Durum", "Status";
    Since => "Başlangıç", "Since";
    Quota => "Aylık kota", "Monthly quota";
    Plans => "Planlar", "Plans";
    Plan => "Plan", "Plan";
    Price => "Fiyat (KDV hariç)", "Price (before KDV)";
    Period => "Dönem", "Period";
    Monthly => "aylık", "monthly";
    Yearly => "yıllık", "yearly";
    Choose => "Seç", "Choose";
    ChangePlan => "Plan değişikliği", "Change of plan";
    UpcomingIntro => "Bu planı şimdi seçerseniz kesilecek fatura:", "The invoice choosing this plan now would issue:";
    NothingInvoiced => "Bu değişiklik için fatura kesilmez.", "Nothing would be invoiced for this change.";
    IssuedOn => "Düzenlenme günü", "Issued on";
    Description => "Açıklama", "Description";
    Amount => "Tutar", "Amount";
    Subtotal => "Ara toplam", "Subtotal";
    Kdv => "KDV", "KDV";
    Total => "Toplam", "Total";
    ConfirmChange => "Onayla ve planı değiştir", "Confirm and change the plan";
    PlanChanged => "Plan değiştirildi.", "The plan is changed.";
    Invoices => "Faturalar", "Invoices";
    Due => "Son ödeme", "Due";
    Pdf => "PDF", "PDF";
    NoPlan => "Kuruluşun bir planı yok.", "The organization has no plan.";
    Support => "Destek", "Support";
    NewTicket => "Yeni destek talebi", "New support ticket";
    Subject => "Konu", "Subject";
    Priority => "Öncelik", "Priority";
    TicketOpened => "Destek talebiniz açıldı.", "Your ticket is open.";
    Tickets => "Destek talepleri", "Support tickets";
    // Your data (KVKK exports).
    YourData => "Verileriniz", "Your data";
    ExportAbout => "Kuruluşunuz hakkında TNS'de tutulan her şeyin bir kopyasını (JSON ve CSV dosyalarından oluşan bir ZIP arşivi) isteyebilirsiniz. Arşiv hazırlanınca burada indirilebilir ve 7 gün saklanır. Kişisel verileri açık olarak içerir; güvenle saklayın.", "You may ask for a copy of everything TNS holds about your organization (a ZIP archive of JSON and CSV files). Once built it can be downloaded here and is kept 7 days. It holds personal data in the clear: keep it safe.";
    ExportOwnerOnly => "Yalnızca kuruluşun sahibi veri kopyası isteyebilir.", "Only the organization's owner may ask for a copy of its data.";
    ExportAsk => "Veri kopyası iste", "Ask for a copy of the data";
    ExportAsked => "İsteğiniz alındı; arşiv birkaç dakika içinde hazır olur.", "Asked: the archive will be ready in a few minutes.";
    Exports => "Veri kopyaları", "Data copies";
    ExportExpires => "Silinme", "Deleted on";
    ExportDownload => "İndir (ZIP)", "Download (ZIP)";
    // Closing the organization (KVKK erasure).
    Closure => "Kuruluşu kapat", "Close the organization";
    ClosureAbout => "Kapatınca tüm işlemler hemen durur: hiçbir kayıt oluşturulamaz, değiştirilemez ya da bildirilemez ve artık ücret kesilmez (peşin ödenmiş kullanılmayan günler alacak yazılır). Veriler okunabilir ve kopyası istenebilir. Bekleme süresi dolunca ve son fatura kesilince, kuruluş hakkında TNS'de tutulan her şey silinir; yalnızca yasanın saklamamızı istediği faturalar ve denetim kaydı kalır. O zamana dek sahip kuruluşu yeniden açabilir.", "Closing stops all work at once: nothing can be created, changed or submitted, and nothing more is billed (unused days already charged are credited). The data can still be read and copied. Once the grace period is over and the last invoice issued, everything TNS holds about the organization is erased, except the invoices and the audit log, which the law requires us to keep. Until then the owner may reopen it.";
    ClosureGrace => "Bekleme süresi (gün)", "Grace period (days)";
    ClosureConfirm => "Onaylamak için kuruluşun vergi numarasını yazın", "Type the organization's tax number to confirm";
    ClosureOwnerOnly => "Kuruluşu yalnızca sahibi kapatabilir.", "Only the organization's owner may close it.";
    ClosureClosed => "Kuruluş kapatıldı. Yeniden açılmazsa verileri şu zamandan sonra silinir:", "The organization is closed. Unless it is reopened, its data is erased after";
    ClosureReopen => "Kuruluşu yeniden aç", "Reopen the organization";
    ClosureReopened => "Kuruluş yeniden açıldı.", "The organization was reopened.";
    // Submissions, reference pickers and cargo.
    SubmissionNo => "Bildirim", "Submission";
    State => "Durum", "State";
    TargetType => "Kayıt türü", "Record type";
    TargetJourney => "Sefer", "Journey";
    TargetCargo => "Yük", "Cargo shipment";
    CreatedFrom => "Başlangıç günü", "From (day)";
    CreatedTo => "Bitiş günü", "To (day)";
    Filter => "Süz", "Filter";
    All => "Tümü", "All";
    Reference => "Referans", "Reference";
    Operation => "İşlem", "Operation";
    Adapter => "Hedef sistem", "Downstream";
    NoAttempts => "Henüz deneme yok.", "No attempts yet.";
    Started => "Başladı", "Started";
    Finished => "Bitti", "Finished";
    SubmittedBy => "Gönderen", "Submitted by";
    AllowedAddresses => "İzinli IP adresleri", "Allowed addresses";
    AddressesIntro => "U-ETDS, firmanın çağrılarını yalnızca firmanın tanımladığı IP adreslerinden kabul eder: TNS'nin adreslerini tanımlayın, yoksa bildirimler reddedilir. Değişiklikler firmanızın U-ETDS bilgileriyle yapılır:",
        "U-ETDS accepts a firm's calls only from the IP addresses the firm registered: register TNS's addresses, or notifications are refused. Changes are made with your firm's U-ETDS credentials:";
    PlatformAddresses => "TNS'nin çağrı yaptığı adresler", "The addresses TNS calls from";
    NoPlatformAddresses => "Platform işletmecisi bu kurulumun adreslerini belirtmedi; destek ekibine sorun.",
        "The platform's operator has not listed this deployment's addresses; ask support.";
    RegisteredAddresses => "U-ETDS'de tanımlı adresler", "Registered at U-ETDS";
    FirstAddress => "IP adresi (ya da aralığın başı)", "IP address (or a range's start)";
    LastAddress => "Aralığın sonu", "Range end";
    LastAddressOptional => "Aralığın sonu (isteğe bağlı)", "Range end (optional)";
    RegisterAddress => "Adres tanımla", "Register an address";
    RegisterIt => "Tanımla", "Register";
    AddressRegistered => "Adres U-ETDS'de tanımlandı.", "The address is registered at U-ETDS.";
    Preflight => "Ön kontroller", "Pre-flight checks";
    PreflightIntro => "Bir sefer ya da yük bildirilmeden önce U-ETDS'nin kendi servislerine sorulur (cevaplar gün boyu saklanır). Geçmeyen bir kontrol bildirime uyarı olarak eklenir ya da bildirimi durdurur; yapılamayan bir kontrol hiçbir zaman durdurmaz. Bildirimlerin gittiği yer:", "Before a journey or shipment is submitted, U-ETDS's own services are asked about it (answers are kept for the day). A check that does not pass is added to the submission as a warning, or stops the submit; a check that cannot be made never stops one. Where submissions go:";
    PreflightMode => "Geçmeyen bir kontrolde", "When a check does not pass";
    PreflightOff => "Kontrol yapma", "Make no checks";
    PreflightWarn => "Uyar ve bildir", "Warn and submit";
    PreflightRefuse => "Bildirme (422)", "Do not submit (422)";
    PreflightChecks => "Yapılacak kontroller", "Checks to make";
    CheckInspection => "Araç muayenesi (sefer günü geçerli)", "Vehicle inspection (valid on the trip's day)";
    CheckAuthorisation => "Yetki belgesi (araç firmanın belgesinde)", "Authorisation certificate (the vehicle is on the firm's)";
    CheckQualification => "Şoförlerin mesleki yeterliliği (SRC)", "Drivers' professional qualification (SRC)";
    CheckIdentity => "T.C. kimlik numarası ve ad soyad", "Turkish identity numbers against names";
    CheckTravelPermit => "Yolcuların seyahat izni", "Passengers' travel permit";
    AddressRemoved => "Adres U-ETDS'den çıkarıldı.", "The address is removed at U-ETDS.";
    Drifted => "TNS dışında değişmiş", "Changed outside TNS";
    Yes => "Evet", "Yes";
    No => "Hayır", "No";
    DriftedHelp => "U-ETDS'nin tuttuğu, TNS'nin bildirdiğinden farklı; kayıt olduğu gibi bırakıldı, ne yapılacağına siz karar verin",
        "What U-ETDS holds differs from what TNS notified; the record is left as it is, you decide what to do";
    Field => "Alan", "Field";
    Expected => "Bildirilen", "Notified";
    Found => "U-ETDS'de", "At U-ETDS";
    Warnings => "Uyarılar", "Warnings";
    Passengers => "Yolcular", "Passengers";
    Sent => "Gönderilen veri", "What was sent";
    CancelDownstream => "Kaydı U-ETDS'te iptal et", "Cancel the record downstream";
    CancelReason => "İptal gerekçesi (isteğe bağlı)", "Reason for cancelling (optional)";
    CancelKind => "İptal türü", "Kind of cancellation";
    FurtherLoads => "Diğer yükler", "Further loads";
    CancelKindDefault => "Varsayılan", "The default";
    CancelQueued => "İptal kuyruğa alındı.", "The cancellation is queued.";
    NewCargo => "Yeni yük", "New shipment";
    EditCargo => "Yükü düzenle", "Edit shipment";
    From => "Yükleme yeri", "Loading place";
    To => "Boşaltma yeri", "Unloading place";
    RecordDraft => "Taslak", "Draft";
    RecordSubmitted => "Gönderildi", "Submitted";
    RecordCancelled => "İptal edildi", "Cancelled";
    SubmissionQueued => "Bildirim kuyruğa alındı.", "The submission is queued.";
    ReportPdf => "Bildirim raporu (PDF)", "Downstream report (PDF)";
    // Registration.
    Register => "Kayıt ol", "Register";
    RegisterTitle => "Kuruluşunuzu kaydedin", "Register your organization";
    Welcome => "Hoş geldiniz", "Welcome";
    WelcomeKey => "Kuruluşunuz kaydedildi. Entegrasyonlarınız için ilk API anahtarınız (tüm yetkiler) aşağıda; yalnızca şimdi gösteriliyor, hemen güvenli bir yere kaydedin. Gerekmiyorsa Ayarlar › API anahtarları'ndan iptal edebilirsiniz.", "Your organization is registered. Your first API key (all scopes) for your integrations is below; it is shown only now, so store it somewhere safe at once. If you do not need it, revoke it under Settings › API keys.";
    ToDashboard => "Panoya git", "Go to the dashboard";
    OrganizationName => "Kuruluş adı", "Organization name";
    TaxNumber => "Vergi numarası (10 hane)", "Tax number (10 digits)";
    PasswordMin => "Parola (en az 8 karakter)", "Password (at least 8 characters)";
    NoAccountYet => "Hesabınız yok mu?", "No account yet?";
    HaveAccount => "Hesabınız var mı?", "Have an account?";
    // Journeys: the list, the form, passengers, submitting.
    JNew => "Yeni sefer", "New journey";
    JEdit => "Seferi düzenle", "Edit journey";
    JJourney => "Sefer", "Journey";
    JDetails => "Sefer bilgileri", "Journey details";
    JVehicle => "Araç", "Vehicle";
    JTripKind => "Sefer türü", "Trip kind";
    JCrew => "Personel", "Crew";
    JDeparture => "Kalkış", "Departure";
    JArrival => "Varış", "Arrival";
    JDepartureDate => "Kalkış tarihi", "Departure date";
    JDepartureTime => "Kalkış saati", "Departure time";
    JDeparturePlace => "Kalkış yeri (ilçe)", "Departure place (district)";
    JArrivalDate => "Varış tarihi", "Arrival date";
    JArrivalTime => "Varış saati", "Arrival time";
    JArrivalPlace => "Varış yeri (ilçe)", "Arrival place (district)";
    JDepartureCountry => "Kalkış ülkesi (yurt dışı; örn. BG)", "Departure country (abroad; e.g. BG)";
    JDepartureAbroad => "Kalkış yeri (yurt dışı)", "Departure place (abroad)";
    JArrivalCountry => "Varış ülkesi (yurt dışı; örn. BG)", "Arrival country (abroad; e.g. BG)";
    JArrivalAbroad => "Varış yeri (yurt dışı)", "Arrival place (abroad)";
    JFirmaId => "Firma kodu", "Company code";
    JRouteCode => "UNET güzergah kodu", "UNET route code";
    JFromPlace => "Hat kalkış yeri", "Route start";
    JToPlace => "Hat varış yeri", "Route end";
    JTravelHours => "Seyahat süresi (saat)", "Travel time (hours)";
    JBoarding => "Biniş yeri", "Boarding place";
    JDestination => "İniş yeri", "Destination";
    JTicketSerial => "Bilet seri no", "Ticket serial";
    JTicketDate => "Bilet tarihi", "Ticket date";
    JAmount => "Ücret", "Fare";
    JSeat => "Koltuk", "Seat";
    JBaggage => "Bagaj barkodları", "Baggage barcodes";
    JRoute => "Güzergah", "Route";
    JFrom => "Kalkış, bu günden", "Departing from";
    JTo => "Kalkış, bu güne kadar", "Departing until";
    JAny => "Tümü", "Any";
    JFilter => "Süz", "Filter";
    JClear => "Temizle", "Clear";
    JPassengers => "Yolcular", "Passengers";
    JRow => "Satır", "Row";
    JAddRow => "Satır ekle", "Add a row";
    JRemoveRow => "Kaldır", "Remove";
    JSavePassengers => "Yolcuları kaydet", "Save passengers";
    JRowErrors => "Hatalı satırlar var; hiçbir yolcu kaydedilmedi. Satırları düzeltip yeniden kaydedin.", "Some rows have errors; no passenger was saved. Correct the rows and save again.";
    JPassengersSaved => "Yolcular kaydedildi", "Passengers saved";
    JPasteOrUpload => "Elektronik tablodan yapıştır ya da dosya yükle", "Paste from a spreadsheet or upload a file";
    JColumns => "Başlık satırı yoksa sütun sırası", "Column order when there is no header row";
    JPasteRows => "Satırları yapıştırın (sekme, ; ya da , ile ayrılmış)", "Paste rows (separated by tabs, ; or ,)";
    JReadRows => "Oku ve kaydet", "Read and save";
    JUploadFile => "CSV ya da Excel (.xlsx) dosyası", "CSV or Excel (.xlsx) file";
    JUpload => "Yükle ve kaydet", "Upload and save";
    JSubmit => "U-ETDS'ye bildir", "Submit to U-ETDS";
    JSubmittedNow => "Bildirim kuyruğa alındı.", "The submission is queued.";
    JNoSubmission => "Henüz bildirilmedi.", "Not submitted yet.";
    JReference => "U-ETDS referansı", "U-ETDS reference";
    JDownloadPdf => "U-ETDS çıktısını indir (PDF)", "Download the U-ETDS report (PDF)";
    JCancelJourney => "Seferi iptal et", "Cancel the journey";
    JReactivate => "Seferi yeniden etkinleştir", "Re-activate the journey";
    JNoShow => "Gelmedi", "Did not come";
    JConfirmReactivate => "Sefer U-ETDS'te yeniden etkinleştirilsin mi?", "Re-activate this journey at U-ETDS?";
    JCancelReason => "İptal nedeni", "Reason for cancelling";
    JConfirmCancel => "Sefer U-ETDS'de iptal edilsin mi?", "Cancel the journey in U-ETDS?";
}

/// A form field's label: the field's name in the language, else its name as the API spells it.
pub fn field_label(lang: Lang, field: &str) -> String {
    let (tr, en) = match field {
        "plate" => ("Plaka", "Plate"),
        "vehicle_type" => ("Araç türü", "Vehicle type"),
        "brand" => ("Marka", "Brand"),
        "model" => ("Model", "Model"),
        "model_year" => ("Model yılı", "Model year"),
        "capacity" => ("Kapasite", "Capacity"),
        "phone" => ("Telefon", "Phone"),
        "identity_number" => ("Kimlik numarası", "Identity number"),
        "first_name" => ("Ad", "First name"),
        "last_name" => ("Soyad", "Last name"),
        "gender" => ("Cinsiyet", "Gender"),
        "nationality" => ("Uyruk", "Nationality"),
        "role_type" => ("Görev", "Role"),
        "address" => ("Adres", "Address"),
        "hes_code" => ("HES kodu", "HES code"),
        "status" => ("Durum", "Status"),
        "vehicle_id" => ("Araç no", "Vehicle id"),
        "driver_id" => ("Sürücü no", "Driver id"),
        "second_driver_id" => ("İkinci sürücü no", "Second driver id"),
        "trailer_plate" => ("Dorse plakası", "Trailer plate"),
        "un_number" => ("Tehlikeli madde UN numarası", "Dangerous goods' UN number"),
        "dangerous_packaging" => ("Tehlikeli madde taşıma şekli", "Dangerous goods carried as"),
        "dangerous_exemption" => ("Tehlikeli madde muafiyet kodu", "Dangerous goods exemption code"),
        "transport_type" => ("Taşıma türü", "Transport type"),
        "cargo_type" => ("Yük türü kodu", "Cargo type code"),
        "transport_mode" => ("Yükleme şekli", "Load mode"),
        "cargo_amount" => ("Miktar", "Amount"),
        "cargo_unit" => ("Birim", "Unit"),
        "sender_tax_number" => ("Gönderen vergi/kimlik no", "Sender tax number"),
        "sender_name" => ("Gönderen", "Sender"),
        "receiver_tax_number" => ("Alıcı vergi/kimlik no", "Receiver tax number"),
        "receiver_name" => ("Alıcı", "Receiver"),
        "loading_date" => ("Yükleme tarihi", "Loading date"),
        "loading_time" => ("Yükleme saati", "Loading time"),
        "loading_city_id" => ("Yükleme ili", "Loading province"),
        "loading_country" => ("Yükleme ülkesi (yurt dışı; örn. DE)", "Loading country (abroad; e.g. DE)"),
        "unloading_country" => ("Boşaltma ülkesi (yurt dışı; örn. DE)", "Unloading country (abroad; e.g. DE)"),
        "loading_district_id" => ("Yükleme ilçesi", "Loading district"),
        "unloading_date" => ("Boşaltma tarihi", "Unloading date"),
        "unloading_time" => ("Boşaltma saati", "Unloading time"),
        "unloading_city_id" => ("Boşaltma ili", "Unloading province"),
        "unloading_district_id" => ("Boşaltma ilçesi", "Unloading district"),
        _ => return field.replace('_', " "),
    };
    match lang {
        Lang::Tr => tr.into(),
        Lang::En => en.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turkish_unless_the_cookie_says_english() {
        let mut h = HeaderMap::new();
        assert_eq!(Lang::of(&h), Lang::Tr);
        h.insert("cookie", "a=b; tns_lang=en".parse().unwrap());
        assert_eq!(Lang::of(&h), Lang::En);
        h.insert("cookie", "tns_lang=de".parse().unwrap());
        assert_eq!(Lang::of(&h), Lang::Tr, "an unknown language is the default");
        assert_eq!(Lang::Tr.t(Msg::Vehicles), "Araçlar");
        assert_eq!(Lang::En.t(Msg::Vehicles), "Vehicles");
        assert_eq!(field_label(Lang::En, "unheard_of"), "unheard of");
    }
}
