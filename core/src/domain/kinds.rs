//! The closed sets of values the API takes and shows, as enums: the document lists exactly
//! these, and an unknown value is a 422 naming the field.

use super::fields::str_enum;

str_enum! {
    /// What kind of vehicle.
    pub enum VehicleType {
        Otobus = "otobus",
        Minibus = "minibus",
        Midibus = "midibus",
        Sedan = "sedan",
        Van = "van",
        Kamyon = "kamyon",
        Tir = "tir",
        Dorse = "dorse",
    }
}

str_enum! {
    /// A crew member's role; U-ETDS's `turKodu` follows from it.
    pub enum RoleType {
        Driver = "driver",
        Host = "host",
        Guide = "guide",
        Other = "other",
    }
}

str_enum! {
    /// `E` (erkek) or `K` (kadın), as U-ETDS writes it.
    pub enum Gender {
        E = "E",
        K = "K",
    }
}

str_enum! {
    /// Unit of a cargo amount.
    pub enum CargoUnit {
        Kg = "KG",
        Ton = "TON",
        Adet = "ADET",
        M3 = "M3",
        Litre = "LITRE",
    }
}

str_enum! {
    /// Support ticket priority.
    pub enum Priority {
        Low = "low",
        Normal = "normal",
        High = "high",
        Urgent = "urgent",
    }
}

str_enum! {
    /// A scheduled trip (`tarifeli`, with its `tarifeli_context`) or a non-scheduled one
    /// (`tarifesiz`, U-ETDS's arızi service).
    pub enum TripKind {
        Tarifeli = "tarifeli",
        Tarifesiz = "tarifesiz",
    }
}

str_enum! {
    /// A journey's or shipment's status, which mirrors its latest submission.
    pub enum RecordStatus {
        Draft = "draft",
        Submitted = "submitted",
        Delivered = "delivered",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

str_enum! {
    /// A submission's state.
    pub enum SubmissionState {
        Pending = "pending",
        /// An earlier call may have reached the downstream and looking it up could not tell:
        /// looked up again with back-off, never sent again blindly, until it is known or an
        /// operator resolves it.
        Unknown = "unknown",
        Delivered = "delivered",
        Failed = "failed",
    }
}

impl SubmissionState {
    /// Not finished: still in the queue (`pending`, `unknown`).
    pub fn is_open(self) -> bool {
        matches!(self, SubmissionState::Pending | SubmissionState::Unknown)
    }
}

str_enum! {
    /// What a plan's price pays for: a calendar month, or a year from the day the plan began.
    pub enum BillingCycle {
        Monthly = "monthly",
        Yearly = "yearly",
    }
}

str_enum! {
    /// What a line of an invoice is: days on a plan charged in advance, days charged before
    /// and no longer on that plan (credited, negative), calls beyond a soft quota, credit moved
    /// to or from the organization's balance, or the tax (KDV) on the lines before it.
    pub enum InvoiceLineKind {
        Plan = "plan",
        Credit = "credit",
        Overage = "overage",
        Balance = "balance",
        Tax = "tax",
    }
}

str_enum! {
    /// What a submission sends.
    pub enum TargetType {
        Journey = "journey",
        Cargo = "cargo",
    }
}

str_enum! {
    /// A webhook delivery's state.
    pub enum DeliveryStatus {
        Pending = "pending",
        Delivered = "delivered",
        Failed = "failed",
    }
}

str_enum! {
    /// The events a subscription can be for.
    pub enum EventType {
        JourneyCreated = "journey.created",
        SubmissionDelivered = "submission.delivered",
        SubmissionFailed = "submission.failed",
        SubmissionUnknown = "submission.unknown",
        SubmissionDrifted = "submission.drifted",
    }
}

str_enum! {
    /// Every event type a delivery record can carry: the subscribable ones and `test`.
    pub enum AnyEventType {
        JourneyCreated = "journey.created",
        SubmissionDelivered = "submission.delivered",
        SubmissionFailed = "submission.failed",
        SubmissionUnknown = "submission.unknown",
        SubmissionDrifted = "submission.drifted",
        Test = "test",
    }
}

str_enum! {
    /// A vehicle's or person's standing: `inactive` once deleted while history refers to it.
    pub enum RegistryStatus {
        Active = "active",
        Inactive = "inactive",
    }
}

str_enum! {
    /// An organization's standing: what it may do (README.md, "Trials and suspension").
    pub enum OrgStatus {
        Trial = "trial",
        Active = "active",
        Suspended = "suspended",
        /// Closed by its owner: read-only and unbilled until reopened or, after the grace
        /// period, erased (README.md, "Closing an organization").
        Closed = "closed",
    }
}

impl OrgStatus {
    /// Whether calls that create, change or submit are refused (see `SUSPENSION_EXEMPT` in
    /// the API for what such an organization is still served).
    pub fn is_restricted(self) -> bool {
        matches!(self, OrgStatus::Suspended | OrgStatus::Closed)
    }

    /// The status once a plan is chosen: a trial becomes `active`, and so does an organization
    /// suspended only because its trial ended (`trial_ended`); an operator's suspension stays.
    pub fn after_plan_choice(self, trial_ended: bool) -> OrgStatus {
        match self {
            OrgStatus::Trial | OrgStatus::Active => OrgStatus::Active,
            OrgStatus::Suspended if trial_ended => OrgStatus::Active,
            OrgStatus::Suspended => OrgStatus::Suspended,
            // Only reopening ends a closure.
            OrgStatus::Closed => OrgStatus::Closed,
        }
    }
}

str_enum! {
    /// A member's role in their organization (README, "Team members"); what each may do is a
    /// set of the API's scopes (`Scopes::of_role`).
    pub enum Role {
        /// Registered the organization; one per organization; everything, admins included.
        Owner = "owner",
        /// Everything, and dispatchers and viewers.
        Admin = "admin",
        /// Journeys, cargo, vehicles and personnel: read, change, submit.
        Dispatcher = "dispatcher",
        /// Submissions (personal data masked), webhooks and billing: read only.
        Viewer = "viewer",
    }
}

impl Role {
    /// Whether a member with this role may invite, change or remove one with `other`.
    pub fn manages(self, other: Role) -> bool {
        match self {
            Role::Owner => other != Role::Owner,
            Role::Admin => matches!(other, Role::Dispatcher | Role::Viewer),
            Role::Dispatcher | Role::Viewer => false,
        }
    }
}

str_enum! {
    /// What an operator (or a job) did, as the audit log names it.
    pub enum AuditAction {
        SetStatus = "set_status",
        TrialExpired = "trial_expired",
        ChangePlan = "change_plan",
        ViewSubmission = "view_submission",
        InvoiceOverdue = "invoice_overdue",
        SettleInvoice = "settle_invoice",
        /// Failed submissions queued again, as they were sent.
        Requeue = "requeue",
        CreateOperatorToken = "create_operator_token",
        RevokeOperatorToken = "revoke_operator_token",
        /// A member invited someone (role and address in `after`).
        InviteMember = "invite_member",
        RevokeInvitation = "revoke_invitation",
        /// Someone accepted an invitation and became a member.
        AcceptInvitation = "accept_invitation",
        ChangeMemberRole = "change_member_role",
        RemoveMember = "remove_member",
        /// A member or API key deleted a record (a draft journey or shipment, a vehicle or
        /// person; which one in `before`, never its contents, which may be personal data).
        DeleteRecord = "delete_record",
        /// An operator settled a submission whose outcome was unknown (`found` with the
        /// downstream's reference, or `absent`).
        ResolveSubmission = "resolve_submission",
        /// A member or API key added or removed a caller address at the downstream (the change
        /// in `after`).
        ChangeAllowedAddresses = "change_allowed_addresses",
        /// A member or API key changed the organization's pre-flight checks (the policy
        /// before and after).
        SetPreflight = "set_preflight",
        /// The owner asked for an export of everything held about the organization.
        RequestExport = "request_export",
        /// An export (personal data in the clear) was downloaded, by whom in `actor`.
        DownloadExport = "download_export",
        /// The owner closed the organization (when it may be erased in `after`).
        CloseOrganization = "close_organization",
        /// The owner reopened it within the grace period.
        ReopenOrganization = "reopen_organization",
        /// The jobs role erased a closed organization (how many rows of each table in `after`).
        EraseOrganization = "erase_organization",
    }
}

str_enum! {
    /// How dangerous goods are carried (U-ETDS `tehlikeliMaddeTasimaSekli`: 1, 2, 3).
    pub enum DangerousPackaging {
        /// In packages (ambalajlı).
        Packaged = "packaged",
        /// In a tank.
        Tank = "tank",
        /// In bulk (dökme).
        Bulk = "bulk",
    }
}

str_enum! {
    /// A support ticket's state.
    pub enum TicketStatus {
        Open = "open",
        Pending = "pending",
        Closed = "closed",
    }
}

str_enum! {
    /// An invoice's state.
    pub enum InvoiceStatus {
        Open = "open",
        Paid = "paid",
        Void = "void",
    }
}

str_enum! {
    /// Amounts are in Turkish lira.
    pub enum Currency {
        Try = "TRY",
    }
}

str_enum! {
    /// What a submission sends: a whole journey, the changes to a delivered one, a shipment, the
    /// cancellation of a delivered journey or shipment, the re-activation of a cancelled journey,
    /// or a passenger's no-show.
    pub enum Operation {
        Journey = "journey",
        Amendment = "amendment",
        Cargo = "cargo",
        Cancel = "cancel",
        Reactivate = "reactivate",
        /// A passenger of a delivered journey did not come.
        NoShow = "no_show",
    }
}

str_enum! {
    /// How one attempt of a submission ended: `partial` (delivered, some passengers refused),
    /// `found` (an earlier attempt had delivered it, learned by lookup), `abandoned` (the
    /// scheduler holding it stopped), `given_back` (its lease would have ended before the next
    /// call could finish).
    pub enum AttemptOutcome {
        Delivered = "delivered",
        Partial = "partial",
        Found = "found",
        Transient = "transient",
        Timeout = "timeout",
        Permanent = "permanent",
        Configuration = "configuration",
        Abandoned = "abandoned",
        GivenBack = "given_back",
    }
}

str_enum! {
    /// Where an organization's data export is: being built (`pending`), ready to download
    /// (for 7 days), `failed` (its `error` says why), or `expired` (the archive dropped).
    pub enum ExportState {
        Pending = "pending",
        Ready = "ready",
        Failed = "failed",
        Expired = "expired",
    }
}

str_enum! {
    /// How one POST of a webhook delivery ended (`skipped`: not sent, the subscription is no
    /// longer active; `abandoned`: the scheduler sending it stopped).
    pub enum DeliveryOutcome {
        Delivered = "delivered",
        Rejected = "rejected",
        Timeout = "timeout",
        Unreachable = "unreachable",
        Refused = "refused",
        Abandoned = "abandoned",
        Skipped = "skipped",
    }
}

impl RecordStatus {
    /// A journey's or shipment's fields may change: not while a submission of it is pending,
    /// never once it is cancelled.
    pub fn is_editable(self) -> bool {
        matches!(self, RecordStatus::Draft | RecordStatus::Delivered | RecordStatus::Failed)
    }
}
