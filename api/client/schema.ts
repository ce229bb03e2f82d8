// Generated from the live /openapi.json by `npm run client:generate` (node/openapi.ts). Do not edit.
/* eslint-disable */
export interface paths {
    "/admin/keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a key */
        get: operations["getAdminKeysByKeyId"];
        put?: never;
        post?: never;
        /** Revoke a key; its next request is refused */
        delete: operations["deleteAdminKeysByKeyId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List organizations (an organization admin sees its own) */
        get: operations["getAdminOrganizations"];
        put?: never;
        /** Create an organization */
        post: operations["postAdminOrganizations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{organizationId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an organization */
        get: operations["getAdminOrganizationsByOrganizationId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{organizationId}/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read the credit balance */
        get: operations["getAdminOrganizationsByOrganizationIdCredits"];
        put?: never;
        /** Grant prepaid credits (the operator's key only) */
        post: operations["postAdminOrganizationsByOrganizationIdCredits"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{organizationId}/credits/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read the credit ledger, newest first */
        get: operations["getAdminOrganizationsByOrganizationIdCreditsLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{organizationId}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the keys of an organization (never their secrets) */
        get: operations["getAdminOrganizationsByOrganizationIdKeys"];
        put?: never;
        /**
         * Issue an API key
         * @description The plain key is in this response only; it is stored as a hash and cannot be shown again. Give projectId or environmentId to grant the key at that level (default: organization).
         */
        post: operations["postAdminOrganizationsByOrganizationIdKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{organizationId}/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the projects of an organization */
        get: operations["getAdminOrganizationsByOrganizationIdProjects"];
        put?: never;
        /** Create a project in an organization */
        post: operations["postAdminOrganizationsByOrganizationIdProjects"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/projects/{projectId}/environments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the environments of a project */
        get: operations["getAdminProjectsByProjectIdEnvironments"];
        put?: never;
        /** Create an environment in a project */
        post: operations["postAdminProjectsByProjectIdEnvironments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/workers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Workers this orchestrator attached, and the ones its operator revoked */
        get: operations["getAdminWorkers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/workers/{hotkey}/revocation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Revoke a worker: its attachment from this orchestrator is refused at once, its session ends, and it is attached no more (kept across restarts) */
        put: operations["putAdminWorkersByHotkeyRevocation"];
        post?: never;
        /** Lift a worker's revocation: it may attach again, within the limits */
        delete: operations["deleteAdminWorkersByHotkeyRevocation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/orchestrator/{orchestratorId}/transfers/{transferId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Raw rows of one orchestrator (UUID, UID or hotkey) on one transfer, by table */
        get: operations["getApiAuditOrchestratorByOrchestratorIdTransfersByTransferId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/worker/{workerId}/transfers/{transferId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Raw rows of one worker (id or hotkey) on one transfer, by table */
        get: operations["getApiAuditWorkerByWorkerIdTransfersByTransferId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/head": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Latest block, its epoch and time, block time and epoch length */
        get: operations["getChainHead"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/prism": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The PRISM scores this orchestrator routes by: the stake-weighted consensus of the validators' latest scores, and each vector */
        get: operations["getChainPrism"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/registrations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Register a node's hotkey in a role on a dev chain (the operator enrolls the nodes of a test network) */
        post: operations["postChainRegistrations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/registrations/{hotkey}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** UID, role and registration block of a hotkey (404 BWN_ERR_CHAIN_NOT_REGISTERED when it has none) */
        get: operations["getChainRegistrationsByHotkey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/sales": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Record an alpha sale by a hotkey (dev chains only; an admin key) */
        post: operations["postChainSales"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chain/weights": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Weight vectors set by validators for an epoch (default: the latest epoch with vectors) */
        get: operations["getChainWeights"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/destinations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Destinations you can send to */
        get: operations["getDestinations"];
        put?: never;
        /** Register a destination (its credentials stay on this node) */
        post: operations["postDestinations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/destinations/{destination_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One destination */
        get: operations["getDestinationsByDestinationId"];
        put?: never;
        post?: never;
        /** Remove a destination; the response body is empty */
        delete: operations["deleteDestinationsByDestinationId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Node identity and the network view: nodes known by role */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: operations["getHealthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: store open and taking writes, swarm joined, actors up
         * @description A 503 names every reason in `reasons` (starting or stopping, an actor down and restarting, the store failing writes for space).
         */
        get: operations["getReadyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your transfers, newest first; display names redacted */
        get: operations["getTransfers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Transfer status */
        get: operations["getTransfersById"];
        put?: never;
        post?: never;
        /** Cancel a transfer (idempotent); no destination write lands after the answer */
        delete: operations["deleteTransfersById"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/{id}/chunks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The sha256 of every received chunk (to check a local file against a transfer) */
        get: operations["getTransfersByIdChunks"];
        put?: never;
        /**
         * Submit one chunk as raw bytes; acknowledged once durable
         * @description Body: the chunk's bytes (application/octet-stream), exactly the planned length of that index. Headers: `X-Chunk-Index` (or query `index`), optional `X-Chunk-SHA256` (hex). The body is streamed to disk and hashed as it arrives: a body longer than the chunk is refused with 413 as soon as the first excess byte arrives (the connection is closed), a shorter one with 400. The same bytes again for an index answer 200 (idempotent); other bytes for a received index answer 409.
         */
        post: operations["postTransfersByIdChunks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * WebSocket: the transfer's events (status and chunk changes) in order, from ?after= on, until its terminal status
         * @description Upgrade to a WebSocket (key in Authorization / X-Api-Key, or the subprotocol `bwnet.key.<key>` next to `bwnet.v1`). Messages: TransferEvent (the 101 response schema here; docs/api.md#live-interface). Events after `after` are replayed from the store, then live ones follow without gap or duplicate; the server closes with 1000 after the terminal status, 1013 when the client falls behind. Close codes: docs/errors.md#websocket-close-codes.
         */
        get: operations["getTransfersByIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/{id}/finalize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Finalize: the transfer completes once every chunk is delivered
         * @description While chunks are missing the answer is 409 with `missing_chunks` (the first 1000 indices) and `missing_count`.
         */
        post: operations["postTransfersByIdFinalize"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/create": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a transfer; the chunk plan follows from total_size */
        post: operations["postTransfersCreate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transfers/tiers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Transfer tiers and the limits of each plan */
        get: operations["getTransfersTiers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit/sell-allowance/{hotkey}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Free audit of a sell allowance: latest published epoch or the given retained one (kept 30 days) */
        get: operations["getV1AuditSellAllowanceByHotkey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/epochs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Published closed-epoch versions (every revision), in publication order; one epoch late, kept 30 days */
        get: operations["getV1TelemetryEpochs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/network": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Latest published network summary, or the one named by snapshotId */
        get: operations["getV1TelemetryNetwork"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/network/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Published network summaries, oldest first (at least one an hour) */
        get: operations["getV1TelemetryNetworkHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/realtime/epochs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The current revision of every retained closed epoch, by epoch; one epoch late, kept 30 days */
        get: operations["getV1TelemetryRealtimeEpochs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/realtime/network": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live network summary (transfers in progress included), or the live version named by snapshotId */
        get: operations["getV1TelemetryRealtimeNetwork"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/realtime/network/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live network summary versions still readable (current and superseded within 10 minutes), oldest first */
        get: operations["getV1TelemetryRealtimeNetworkHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/realtime/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * WebSocket: each new live network version, charged per push like a realtime read
         * @description Upgrade to a WebSocket (key in X-Api-Key, or the subprotocol `bwnet.key.<key>` next to `bwnet.v1`). Messages: RealtimeStreamMessage (the 101 response schema here), whose `envelope` is the realtime/network body of that version. Each push is debited at the realtime read price; an organization that cannot pay the next push is closed with 4402. `snapshotId` names the version the client already holds: it is not sent again.
         */
        get: operations["getV1TelemetryRealtimeStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/realtime/tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live task evidence, transfers in progress included; pending_verification apart from verified
         * @description snapshotId pins the live version (from a realtime read) the listing shows; without it the current version is pinned.
         */
        get: operations["getV1TelemetryRealtimeTasks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/sell-allowance/{hotkey}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Sell allowance proof of a miner hotkey (published one epoch late, kept 7 days) */
        get: operations["getV1TelemetrySellAllowanceByHotkey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry/tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Finished task evidence of published terminal transfers, in publication order */
        get: operations["getV1TelemetryTasks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** AuditTablePage */
        AuditTablePage: {
            has_more: boolean;
            limit: number;
            next_offset: number;
            offset: number;
            returned: number;
        };
        /** ChunkAck */
        ChunkAck: {
            bytes: number;
            chunk_index: number;
            chunks_received: number;
            duplicate: boolean;
            sha256: string;
            /** Format: uuid */
            transfer_id: string;
        };
        /** CreateDestinationBody */
        CreateDestinationBody: {
            config: {
                accessKeyId: string;
                bucket: string;
                /** Format: uri */
                endpoint: string;
                keyPrefix?: string;
                region: string;
                secretAccessKey: string;
                sharedPartNumbers?: boolean;
            };
            /** @enum {string} */
            kind: "s3";
            name: string;
        } | {
            config: {
                /** Format: uri */
                completeUrl?: string;
                controlHeaders?: {
                    [key: string]: string;
                };
                deleteOnAbort?: boolean;
                uploadHeaders?: {
                    [key: string]: string;
                };
                /** @description PUT target; {transferId} and {filename} are replaced */
                url: string;
            };
            /** @enum {string} */
            kind: "http";
            name: string;
        } | {
            config: {
                /** Format: uri */
                baseUrl: string;
            };
            /** @enum {string} */
            kind: "node";
            name: string;
        };
        /** CreateTransferBody */
        CreateTransferBody: {
            /** @description default: the node's default destination */
            destination_id?: string;
            /** @description a file name, or a relative path of names joined by "/" (sub/b.txt); NFC, no hidden, empty, "." or ".." segments */
            filename: string;
            /** @description SS58 hotkey of the sender; the checksum is verified */
            sender_hotkey: string;
            /** @description see GET /transfers/tiers */
            tier: string;
            /** @description bytes */
            total_size: number;
        };
        /** DestinationRecord */
        DestinationRecord: {
            builtin: boolean;
            config: {
                [key: string]: string | boolean | null;
            };
            /** Format: date-time */
            created_at: string;
            id: string;
            kind: "node" | "http" | "s3";
            name: string;
        };
        /** EpochSummary */
        EpochSummary: {
            /** Format: date-time */
            computedAt: string;
            contributingOrchestratorCount: number;
            correctionReason: string | null;
            epoch: number;
            /** Format: date-time */
            epochSummaryVersion: string;
            expectedOrchestratorCount: number;
            formulaVersion: string;
            previousSnapshotId: string | null;
            revision: number;
            sumFinalShare: number;
        };
        /**
         * EpochSummaryEnvelope
         * @description Snapshot envelope (seed §2.1) of a closed epoch
         */
        EpochSummaryEnvelope: {
            data: components["schemas"]["EpochSummary"];
            evidenceSequence: string;
            /** Format: uri */
            formulaReference: string;
            /** Format: date-time */
            observedAt: string;
            /** Format: date-time */
            publishedAt: string;
            /** Format: uuid */
            snapshotId: string;
            sourceEpoch: number;
            version: string;
        };
        /** EpochSummaryEnvelopeList */
        EpochSummaryEnvelopeList: {
            items: components["schemas"]["EpochSummaryEnvelope"][];
            /** @description Cursor of the next page; the empty string once the listing is complete */
            nextCursor: string;
        };
        /** NetworkSummary */
        NetworkSummary: {
            completedTransfers: number;
            lookbackDays: number;
            /** Format: date-time */
            measurementWindowEnd: string;
            /** Format: date-time */
            measurementWindowStart: string;
            /** Format: date-time */
            observationHour: string;
            orchestratorCount: number;
            providers: {
                provider: string;
                workerCount: number;
            }[];
            reportedCapacityMbps: number;
            transferredBytes: number;
            validatorCount: number;
            /** @description Reference to the latest published epoch weights */
            weights: {
                [key: string]: unknown;
            };
            workerCount: number;
            workloads: components["schemas"]["WorkloadEntry"][];
        };
        /**
         * NetworkSummaryEnvelope
         * @description Snapshot envelope (seed §2.1) of a network summary
         */
        NetworkSummaryEnvelope: {
            data: components["schemas"]["NetworkSummary"];
            evidenceSequence: string;
            /** Format: uri */
            formulaReference: string;
            /** Format: date-time */
            observedAt: string;
            /** Format: date-time */
            publishedAt: string;
            /** Format: uuid */
            snapshotId: string;
            sourceEpoch: number;
            version: string;
        };
        /** NetworkSummaryEnvelopeList */
        NetworkSummaryEnvelopeList: {
            items: components["schemas"]["NetworkSummaryEnvelope"][];
            /** @description Cursor of the next page; the empty string once the listing is complete */
            nextCursor: string;
        };
        /** OrchestratorAudit */
        OrchestratorAudit: {
            overseer_interventions: {
                [key: string]: unknown;
            }[];
            pagination: {
                limit: number;
                offset: number;
                tables: {
                    overseer_interventions: components["schemas"]["AuditTablePage"];
                    task_attempts: components["schemas"]["AuditTablePage"];
                    task_offer_batches: components["schemas"]["AuditTablePage"];
                    task_results: components["schemas"]["AuditTablePage"];
                    tasks: components["schemas"]["AuditTablePage"];
                    transfer_assignment_plans: components["schemas"]["AuditTablePage"];
                };
            };
            participant: {
                hotkey: string;
                id: string;
                role: string;
            };
            task_attempts: {
                [key: string]: unknown;
            }[];
            task_offer_batches: {
                [key: string]: unknown;
            }[];
            task_results: {
                [key: string]: unknown;
            }[];
            tasks: {
                [key: string]: unknown;
            }[];
            transfer_assignment_plans: {
                [key: string]: unknown;
            }[];
            /** Format: uuid */
            transfer_id: string;
            transfer_name: null;
        };
        /** PlanLimits */
        PlanLimits: {
            concurrent_transfers: number | null;
            max_file_size_bytes: number | null;
            plan: string;
            requests_per_minute: number | null;
        };
        /** @description RFC 9457 problem details */
        Problem: {
            /** @description BWN_ERR_INSUFFICIENT_CREDITS (402): the organization's balance */
            balance?: number;
            /** @description Stable machine code, see docs/errors.md */
            code: string;
            detail: string;
            /** @description Validation failures (400) */
            errors?: {
                field: string;
                message: string;
            }[];
            /** @description The request id */
            instance: string;
            /** @description BWN_ERR_CHUNKS_MISSING (409): the first missing chunk indices */
            missing_chunks?: number[];
            /** @description BWN_ERR_CHUNKS_MISSING (409): how many chunks are missing */
            missing_count?: number;
            /** @description BWN_ERR_INSUFFICIENT_CREDITS (402): the price of the read */
            price?: number;
            status: number;
            title: string;
            /** @description urn:bwnet:problem:<code> */
            type: string;
        } & {
            [key: string]: unknown;
        };
        /** RealtimeStreamMessage */
        RealtimeStreamMessage: {
            /**
             * Format: date-time
             * @description When the version was pushed
             */
            at: string;
            /** @description Credits debited for this push */
            charged: number;
            /** @description The realtime/network envelope (TelemetryEnvelope of a NetworkSummary) */
            envelope: {
                [key: string]: unknown;
            };
            /** @description The organization's balance after the debit */
            remaining: number;
            /** @description Pushes on this connection, 1, 2, 3, … */
            seq: number;
            /** @description The live version pushed (the envelope's snapshotId) */
            snapshotId: string;
            /** @enum {string} */
            type: "network";
        };
        /** SellAllowanceFree */
        SellAllowanceFree: {
            epoch: number;
            formulaVersion: string;
            hotkey: string;
            sellAllowance: {
                allowanceRemainingAlphaRao: string;
                baseAlpha7dRao: string;
                baseAlphaRao: string;
                baseWeight: number;
                /** Format: date-time */
                computedAt: string;
                excessAlpha7dRao: string;
                frequencyMultiplier: number;
                holding: number;
                lastSaleBlock: number | null;
                newHotkeyRamp: number;
                receivedWeight: number;
                sales7d: number;
                sellAllowanceMultiplier: number;
                sellDebtAlphaRao: string;
                sellMultiplier: number;
                soldAlpha7dRao: string;
            };
            uid: number;
        };
        /**
         * SellAllowanceFreeEnvelope
         * @description Snapshot envelope (seed §2.1) of a free sell allowance audit
         */
        SellAllowanceFreeEnvelope: {
            data: components["schemas"]["SellAllowanceFree"];
            evidenceSequence: string;
            /** Format: uri */
            formulaReference: string;
            /** Format: date-time */
            observedAt: string;
            /** Format: date-time */
            publishedAt: string;
            /** Format: uuid */
            snapshotId: string;
            sourceEpoch: number;
            version: string;
        };
        /** SellAllowancePaid */
        SellAllowancePaid: {
            epoch: number;
            formulaVersion: string;
            hotkey: string;
            sellAllowance: {
                baseAlpha7dRao: string;
                baseAlphaRao: string;
                baseWeight: number;
                /** Format: date-time */
                computedAt: string;
                excessAlpha7dRao: string;
                frequencyMultiplier: number;
                holding: number;
                lastSaleBlock: number | null;
                newHotkeyRamp: number;
                nextPenaltyFreeSaleBlock: number;
                /** Format: date-time */
                nextPenaltyFreeSaleEstimatedAt: string;
                receivedWeight: number;
                sales7d: number;
                sellAllowanceMultiplier: number;
                sellDebtAlphaRao: string;
                sellMultiplier: number;
                soldAlpha7dRao: string;
                transferableAlphaRao: string;
                windowEndBlock: number;
            };
            uid: number;
        };
        /**
         * SellAllowancePaidEnvelope
         * @description Snapshot envelope (seed §2.1) of a sell allowance
         */
        SellAllowancePaidEnvelope: {
            data: components["schemas"]["SellAllowancePaid"];
            evidenceSequence: string;
            /** Format: uri */
            formulaReference: string;
            /** Format: date-time */
            observedAt: string;
            /** Format: date-time */
            publishedAt: string;
            /** Format: uuid */
            snapshotId: string;
            sourceEpoch: number;
            version: string;
        };
        /** TaskEvidence */
        TaskEvidence: {
            attemptId: string;
            batchId: string;
            /** Format: date-time */
            finishedAt: string;
            neutral: boolean;
            orchestratorId: string;
            /** @description qualifying | qualified | unscored */
            pool: string;
            recovery: boolean;
            /** @description verified | failed | cancelled | pending_verification (realtime only) */
            state: string;
            taskId: string;
            trustedDurationMs: number;
            verifiedBandwidthMbps: number;
            verifiedBytes: number;
            workerId: string;
            workload: string;
        };
        /**
         * TaskEvidenceEnvelope
         * @description Snapshot envelope (seed §2.1) of finished task evidence
         */
        TaskEvidenceEnvelope: {
            data: components["schemas"]["TaskEvidence"];
            evidenceSequence: string;
            /** Format: uri */
            formulaReference: string;
            /** Format: date-time */
            observedAt: string;
            /** Format: date-time */
            publishedAt: string;
            /** Format: uuid */
            snapshotId: string;
            sourceEpoch: number;
            version: string;
        };
        /** TaskEvidenceEnvelopeList */
        TaskEvidenceEnvelopeList: {
            items: components["schemas"]["TaskEvidenceEnvelope"][];
            /** @description Cursor of the next page; the empty string once the listing is complete */
            nextCursor: string;
        };
        /** Tier */
        Tier: {
            description: string;
            max_chunks: number;
            min_chunk_size: number;
            name: string;
        };
        /** TiersResponse */
        TiersResponse: {
            plans: components["schemas"]["PlanLimits"][];
            tiers: components["schemas"]["Tier"][];
            your_plan: string | null;
        };
        /** TransferEvent */
        TransferEvent: {
            /**
             * Format: date-time
             * @description When the coordinator recorded the change
             */
            at: string;
            bytes: {
                delivered: number;
                received: number;
                total: number;
            };
            /** @description The chunk of a chunk_* event; null on status events */
            chunk_index: number | null;
            chunks: {
                delivered: number;
                received: number;
                total: number;
                verified: number;
            };
            error: {
                code: string;
                message: string;
            } | null;
            /** @description Per-transfer sequence number, 1, 2, 3, … without gaps */
            seq: number;
            status: "pending" | "in_progress" | "completed" | "failed" | "cancelled";
            /** Format: uuid */
            transfer_id: string;
            /** @description status: the transfer's status changed; chunk_*: one chunk was received (staged), delivered, verified, or sent back to be delivered again */
            type: "status" | "chunk_received" | "chunk_delivered" | "chunk_verified" | "chunk_requeued";
        };
        /** TransferRecord */
        TransferRecord: {
            bytes: {
                delivered: number;
                received: number;
                total: number;
            };
            chunk_size: number;
            chunks: {
                delivered: number;
                received: number;
                total: number;
                verified: number;
            };
            completed_at: string | null;
            /** Format: date-time */
            created_at: string;
            destination_id: string;
            error: {
                code: string;
                message: string;
            } | null;
            finalize_requested: boolean;
            finalized_at: string | null;
            /** Format: uuid */
            id: string;
            metadata: {
                name?: string;
            };
            sender_hotkey: string;
            started_at: string | null;
            status: "pending" | "in_progress" | "completed" | "failed" | "cancelled";
            /** @description Once completed at a destination that names the file itself (the node sink): the name it is stored under in your organization's namespace; differs from the requested filename when your organization already held that name (`name-1.ext`, ...). Null before completion, for other destinations, and in lists and dashboards (docs/transfers.md#stored-name) */
            stored_filename: string | null;
            tier: string;
            total_chunks: number;
            total_size: number;
            transfer_name: string | null;
            /** Format: date-time */
            updated_at: string;
        };
        /** WorkerAudit */
        WorkerAudit: {
            overseer_interventions: {
                [key: string]: unknown;
            }[];
            pagination: {
                limit: number;
                offset: number;
                tables: {
                    overseer_interventions: components["schemas"]["AuditTablePage"];
                    task_attempts: components["schemas"]["AuditTablePage"];
                    task_results: components["schemas"]["AuditTablePage"];
                    tasks: components["schemas"]["AuditTablePage"];
                    transfer_assignment_plans: components["schemas"]["AuditTablePage"];
                    workers: components["schemas"]["AuditTablePage"];
                };
            };
            participant: {
                hotkey: string;
                id: string;
                role: string;
            };
            task_attempts: {
                [key: string]: unknown;
            }[];
            task_results: {
                [key: string]: unknown;
            }[];
            tasks: {
                [key: string]: unknown;
            }[];
            transfer_assignment_plans: {
                [key: string]: unknown;
            }[];
            /** Format: uuid */
            transfer_id: string;
            transfer_name: null;
            workers: {
                [key: string]: unknown;
            }[];
        };
        /** WorkloadEntry */
        WorkloadEntry: {
            attemptCount: number;
            failedTasks: number;
            measuredBytes: number;
            measuredDurationMs: number;
            /** Format: date-time */
            measurementWindowEnd: string;
            /** Format: date-time */
            measurementWindowStart: string;
            metricDescription: string;
            neutralExcludedTasks: number;
            orchestratorCount: number;
            originalTaskCount: number;
            pendingVerificationTasks: number;
            recoveryAttemptCount: number;
            recoveryVerifiedBytes: number;
            reportedCapacityMbps: number;
            successfulTasks: number;
            verifiedBandwidthMbps: number;
            verifiedBytes: number;
            workload: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getAdminKeysByKeyId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Public id of a key; also its visible prefix */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        environmentId: string | null;
                        expiresAt: string | null;
                        grant: "organization" | "project" | "environment";
                        /** @description SS58 hotkey of the participant the key is bound to */
                        hotkey?: string;
                        /** @description Public id of a key; also its visible prefix */
                        id: string;
                        name: string | null;
                        /** @description An admin key of the network operator (every organization); other admin keys reach only their own organization */
                        operator: boolean;
                        /** Format: uuid */
                        organizationId: string;
                        plan: "free" | "pro" | "enterprise";
                        /** @description The start of the key, enough to recognise it */
                        prefix: string;
                        projectId: string | null;
                        revokedAt: string | null;
                        role: "client" | "orchestrator" | "worker" | "validator" | "console" | "admin";
                        scopes: ("telemetry:read" | "telemetry:realtime:read")[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteAdminKeysByKeyId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Public id of a key; also its visible prefix */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        environmentId: string | null;
                        expiresAt: string | null;
                        grant: "organization" | "project" | "environment";
                        /** @description SS58 hotkey of the participant the key is bound to */
                        hotkey?: string;
                        /** @description Public id of a key; also its visible prefix */
                        id: string;
                        name: string | null;
                        /** @description An admin key of the network operator (every organization); other admin keys reach only their own organization */
                        operator: boolean;
                        /** Format: uuid */
                        organizationId: string;
                        plan: "free" | "pro" | "enterprise";
                        /** @description The start of the key, enough to recognise it */
                        prefix: string;
                        projectId: string | null;
                        revokedAt: string | null;
                        role: "client" | "orchestrator" | "worker" | "validator" | "console" | "admin";
                        scopes: ("telemetry:read" | "telemetry:realtime:read")[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: uuid */
                            id: string;
                            name: string;
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAdminOrganizations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: uuid */
                        id: string;
                        name: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizationsByOrganizationId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: uuid */
                        id: string;
                        name: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizationsByOrganizationIdCredits: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        balance: number;
                        /** @description Ledger entries so far */
                        entries: number;
                        /** Format: uuid */
                        organizationId: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAdminOrganizationsByOrganizationIdCredits: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    amount: number;
                    memo?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        balance: number;
                        /** @description Ledger entries so far */
                        entries: number;
                        /** Format: uuid */
                        organizationId: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizationsByOrganizationIdCreditsLedger: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** @description Credits added (positive) or spent (negative) */
                            amount: number;
                            /** Format: date-time */
                            at: string;
                            balanceAfter: number;
                            keyId: string | null;
                            kind: "grant" | "read";
                            memo: string | null;
                            /** Format: uuid */
                            organizationId: string;
                            seq: number;
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizationsByOrganizationIdKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            createdAt: string;
                            environmentId: string | null;
                            expiresAt: string | null;
                            grant: "organization" | "project" | "environment";
                            /** @description SS58 hotkey of the participant the key is bound to */
                            hotkey?: string;
                            /** @description Public id of a key; also its visible prefix */
                            id: string;
                            name: string | null;
                            /** @description An admin key of the network operator (every organization); other admin keys reach only their own organization */
                            operator: boolean;
                            /** Format: uuid */
                            organizationId: string;
                            plan: "free" | "pro" | "enterprise";
                            /** @description The start of the key, enough to recognise it */
                            prefix: string;
                            projectId: string | null;
                            revokedAt: string | null;
                            role: "client" | "orchestrator" | "worker" | "validator" | "console" | "admin";
                            scopes: ("telemetry:read" | "telemetry:realtime:read")[];
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAdminOrganizationsByOrganizationIdKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: uuid */
                    environmentId?: string;
                    /** Format: date-time */
                    expiresAt?: string;
                    /** @description SS58 hotkey of the participant the key is bound to */
                    hotkey?: string;
                    /** @description With hotkey: that hotkey's consent to this very request (`bwnet keys prove-binding`; docs/api.md#binding-proof) */
                    hotkeyProof?: {
                        /** @description Unique per proof; a nonce the hotkey used before is refused (BWN_ERR_HOTKEY_PROOF_REPLAYED) */
                        nonce: string;
                        /** @description The hotkey's sr25519 signature (hex) over the method, path, body digest, timestamp and nonce (docs/api.md#binding-proof) */
                        signature: string;
                        /** @description Milliseconds since the epoch when the hotkey signed; refused further than 5 minutes from the server's clock (BWN_ERR_HOTKEY_PROOF_STALE) */
                        timestamp: number;
                    };
                    name?: string;
                    /** @description Admin keys only: an operator key reaches every organization. Only an operator key may issue one. */
                    operator?: boolean;
                    /** @description Chosen by the operator only; default free. An organization admin issues keys on its own plan (any other: 403 BWN_ERR_OPERATOR_ONLY). */
                    plan?: "free" | "pro" | "enterprise";
                    /** Format: uuid */
                    projectId?: string;
                    role: "client" | "orchestrator" | "worker" | "validator" | "console" | "admin";
                    scopes?: ("telemetry:read" | "telemetry:realtime:read")[];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        apiKey: {
                            /** Format: date-time */
                            createdAt: string;
                            environmentId: string | null;
                            expiresAt: string | null;
                            grant: "organization" | "project" | "environment";
                            /** @description SS58 hotkey of the participant the key is bound to */
                            hotkey?: string;
                            /** @description Public id of a key; also its visible prefix */
                            id: string;
                            name: string | null;
                            /** @description An admin key of the network operator (every organization); other admin keys reach only their own organization */
                            operator: boolean;
                            /** Format: uuid */
                            organizationId: string;
                            plan: "free" | "pro" | "enterprise";
                            /** @description The start of the key, enough to recognise it */
                            prefix: string;
                            projectId: string | null;
                            revokedAt: string | null;
                            role: "client" | "orchestrator" | "worker" | "validator" | "console" | "admin";
                            scopes: ("telemetry:read" | "telemetry:realtime:read")[];
                        };
                        /** @description The plain key. Shown once, here; only its hash is stored. */
                        key: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminOrganizationsByOrganizationIdProjects: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: uuid */
                            id: string;
                            name: string;
                            /** Format: uuid */
                            organizationId: string;
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAdminOrganizationsByOrganizationIdProjects: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                organizationId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: uuid */
                        id: string;
                        name: string;
                        /** Format: uuid */
                        organizationId: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminProjectsByProjectIdEnvironments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            createdAt: string;
                            /** Format: uuid */
                            id: string;
                            name: string;
                            /** Format: uuid */
                            organizationId: string;
                            /** Format: uuid */
                            projectId: string;
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAdminProjectsByProjectIdEnvironments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: uuid */
                        id: string;
                        name: string;
                        /** Format: uuid */
                        organizationId: string;
                        /** Format: uuid */
                        projectId: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAdminWorkers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** @description Holds a live attachment from this orchestrator (connected, or gone with it still valid) */
                            attached: boolean;
                            /** @description When that attachment expires; null when it holds none */
                            expiresAt: string | null;
                            hotkey: string;
                            /** @description Revoked by the operator: refused here until reinstated, across restarts */
                            revoked: boolean;
                            revokedAt: string | null;
                        }[];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putAdminWorkersByHotkeyRevocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                hotkey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Holds a live attachment from this orchestrator (connected, or gone with it still valid) */
                        attached: boolean;
                        /** @description When that attachment expires; null when it holds none */
                        expiresAt: string | null;
                        hotkey: string;
                        /** @description Revoked by the operator: refused here until reinstated, across restarts */
                        revoked: boolean;
                        revokedAt: string | null;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteAdminWorkersByHotkeyRevocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                hotkey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        wasRevoked: boolean;
                        worker: {
                            /** @description Holds a live attachment from this orchestrator (connected, or gone with it still valid) */
                            attached: boolean;
                            /** @description When that attachment expires; null when it holds none */
                            expiresAt: string | null;
                            hotkey: string;
                            /** @description Revoked by the operator: refused here until reinstated, across restarts */
                            revoked: boolean;
                            revokedAt: string | null;
                        };
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getApiAuditOrchestratorByOrchestratorIdTransfersByTransferId: {
        parameters: {
            query?: {
                /** @description Rows per table */
                limit?: number;
                /** @description Row offset per table */
                offset?: number;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path: {
                /** @description Orchestrator UUID, UID or hotkey */
                orchestratorId: string;
                transferId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrchestratorAudit"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getApiAuditWorkerByWorkerIdTransfersByTransferId: {
        parameters: {
            query?: {
                /** @description Rows per table */
                limit?: number;
                /** @description Row offset per table */
                offset?: number;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path: {
                transferId: string;
                /** @description Worker id or hotkey */
                workerId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkerAudit"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getChainHead: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        atMs: number;
                        block: number;
                        blocksPerEpoch: number;
                        blockTimeMs: number;
                        epoch: number;
                    };
                };
            };
            /** @description BWN_ERR_CHAIN_REJECTED */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_TIMEOUT */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getChainPrism: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        computedAt: number | null;
                        /** @description the latest epoch validators holding at least half the stake have reported; null without consensus */
                        epoch: number | null;
                        /** @description the consensus: orchestrators scored by validators holding at least half the stake (docs/formulas.md#prism-consensus) */
                        scores: {
                            activeTimeRatio?: number;
                            finalScore: number;
                            hotkey: string;
                            penaltyMultiplier: number;
                            pool: string;
                            readinessMultiplier?: number;
                            routingScore: number;
                        }[];
                        /** @description stake of every permitted validator, the consensus's denominator; null until the chain answered */
                        totalStakeRao: string | null;
                        /** @description the validator that holds the deciding stake alone (the consensus is its vector); null when several combine or none count */
                        validator: string | null;
                        /** @description each permitted validator's latest vector that counts (fresh epoch), most stake first */
                        validators: {
                            computedAt: number;
                            epoch: number;
                            hotkey: string;
                            scores: {
                                activeTimeRatio?: number;
                                finalScore: number;
                                hotkey: string;
                                penaltyMultiplier: number;
                                pool: string;
                                readinessMultiplier?: number;
                                routingScore: number;
                            }[];
                            /** @description rao (1 α = 10⁹ rao), as a decimal string */
                            stakeRao: string;
                        }[];
                    };
                };
            };
        };
    };
    postChainRegistrations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    hotkey: string;
                    role: "orchestrator" | "worker" | "validator";
                    /** @description stake for a validator permit, rao as text */
                    stakeRao?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        hotkey: string;
                        registeredAtBlock: number;
                        role: string;
                        uid: number;
                    };
                };
            };
            /** @description BWN_ERR_VALIDATION; BWN_ERR_CHAIN_BAD_AMOUNT */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required; BWN_ERR_CHAIN_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_REJECTED */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_TIMEOUT */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getChainRegistrationsByHotkey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                hotkey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        hotkey: string;
                        registeredAtBlock: number;
                        role: string;
                        uid: number;
                    };
                };
            };
            /** @description BWN_ERR_VALIDATION */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_NOT_REGISTERED */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_REJECTED */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_TIMEOUT */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postChainSales: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description rao (1 α = 10⁹ rao), a positive integer as text */
                    alphaRao: string;
                    /** @description block of the sale; the head by default */
                    block?: number;
                    hotkey: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        alphaRao: string;
                        block: number;
                        hotkey: string;
                        txId: string;
                    };
                };
            };
            /** @description BWN_ERR_VALIDATION; BWN_ERR_CHAIN_BAD_AMOUNT; BWN_ERR_CHAIN_BAD_BLOCK */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required; BWN_ERR_CHAIN_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_NOT_REGISTERED */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_INSUFFICIENT_ALPHA */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_REJECTED */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_TIMEOUT */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getChainWeights: {
        parameters: {
            query?: {
                epoch?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        epoch: number;
                        headEpoch: number;
                        weights: {
                            block: number;
                            epoch: number;
                            txId: string;
                            uids: number[];
                            validatorHotkey: string;
                            weights: number[];
                        }[];
                    };
                };
            };
            /** @description BWN_ERR_VALIDATION */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_REJECTED */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description BWN_ERR_CHAIN_TIMEOUT */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDestinations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["DestinationRecord"][];
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDestinations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateDestinationBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DestinationRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDestinationsByDestinationId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                destination_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DestinationRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteDestinationsByDestinationId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                destination_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed; empty body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        node: {
                            hotkey: string;
                            role: string;
                            software: string;
                        };
                        nodes: {
                            orchestrator: number;
                            validator: number;
                            worker: number;
                        };
                        /** @enum {string} */
                        status: "ok";
                        total: number;
                    };
                };
            };
        };
    };
    getHealthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
        };
    };
    getReadyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ready";
                    };
                };
            };
            /** @description Not ready: starting, stopping, an actor down, or the store failing writes */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTransfers: {
        parameters: {
            query?: {
                limit?: number;
                offset?: number;
                status?: "pending" | "in_progress" | "completed" | "failed" | "cancelled";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["TransferRecord"][];
                        limit: number;
                        offset: number;
                        total: number;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTransfersById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteTransfersById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The node's data directory is at its free-space watermark or out of space; final for this request, retry once space is freed (BWN_ERR_STORAGE_FULL) */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTransfersByIdChunks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        chunk_size: number;
                        /** @description received chunks in index order; a missing index was not received */
                        items: {
                            bytes: number;
                            index: number;
                            /** @description hex sha256 of the chunk as received (and as delivered: the network checks each delivery against it) */
                            sha256: string;
                            state: "staged" | "delivering" | "delivered" | "verified";
                        }[];
                        total_chunks: number;
                        /** Format: uuid */
                        transfer_id: string;
                    };
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postTransfersByIdChunks: {
        parameters: {
            query?: {
                index?: number;
            };
            header?: {
                "x-chunk-index"?: string;
                "x-chunk-sha256"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description The chunk's bytes */
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChunkAck"];
                };
            };
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChunkAck"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Error */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Error */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The node's data directory is at its free-space watermark or out of space; final for this request, retry once space is freed (BWN_ERR_STORAGE_FULL) */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTransfersByIdEvents: {
        parameters: {
            query?: {
                /** @description The last seq the client holds; 0 for everything */
                after?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching Protocols: the server then sends TransferEvent messages as JSON text frames (docs/api.md#live-interface) */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferEvent"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Upgrade required: a WebSocket route asked for without an upgrade (BWN_ERR_UPGRADE_REQUIRED) */
            426: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postTransfersByIdFinalize: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferRecord"];
                };
            };
            /** @description Accepted */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The node's data directory is at its free-space watermark or out of space; final for this request, retry once space is freed (BWN_ERR_STORAGE_FULL) */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postTransfersCreate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateTransferBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransferRecord"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Error */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The node's data directory is at its free-space watermark or out of space; final for this request, retry once space is freed (BWN_ERR_STORAGE_FULL) */
            507: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTransfersTiers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TiersResponse"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1AuditSellAllowanceByHotkey: {
        parameters: {
            query?: {
                /** @description Selects a retained epoch proof */
                epoch?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path: {
                /** @description SS58 hotkey */
                hotkey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Snapshot envelope (seed §2.1) of a free sell allowance audit */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SellAllowanceFreeEnvelope"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryEpochs: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpochSummaryEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryNetwork: {
        parameters: {
            query?: {
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Snapshot envelope (seed §2.1) of a network summary */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NetworkSummaryEnvelope"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryNetworkHistory: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NetworkSummaryEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryRealtimeEpochs: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EpochSummaryEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryRealtimeNetwork: {
        parameters: {
            query?: {
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Snapshot envelope (seed §2.1) of a live network summary */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NetworkSummaryEnvelope"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryRealtimeNetworkHistory: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NetworkSummaryEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryRealtimeStream: {
        parameters: {
            query?: {
                /** @description The live version the client holds (not resent) */
                snapshotId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching Protocols: the server then sends RealtimeStreamMessage messages as JSON text frames (docs/api.md#live-interface) */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RealtimeStreamMessage"];
                };
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Upgrade required: a WebSocket route asked for without an upgrade (BWN_ERR_UPGRADE_REQUIRED) */
            426: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryRealtimeTasks: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description An orchestrator or worker id (hotkey) */
                participantId?: string;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                transferId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskEvidenceEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetrySellAllowanceByHotkey: {
        parameters: {
            query?: {
                /** @description Selects a retained epoch proof */
                epoch?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path: {
                /** @description SS58 hotkey */
                hotkey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Snapshot envelope (seed §2.1) of a sell allowance */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SellAllowancePaidEnvelope"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getV1TelemetryTasks: {
        parameters: {
            query?: {
                /** @description nextCursor of the previous page; the filters must stay the same */
                cursor?: string;
                /** @description Items per page, 1 to 100 */
                limit?: number;
                /** @description An orchestrator or worker id (hotkey) */
                participantId?: string;
                /** @description Only items observed at or after this time */
                since?: string;
                /** @description A snapshot id; on realtime routes, a live version obtained from a realtime read */
                snapshotId?: string;
                transferId?: string;
                /** @description Only items observed at or before this time */
                until?: string;
            };
            header?: {
                /** @description An ETag of a payload already held: the answer is then 304, free */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    /** @description Credits this read cost the organization */
                    "X-Credits-Charged"?: string;
                    /** @description The organization's balance after the charge */
                    "X-Credits-Remaining"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskEvidenceEnvelopeList"];
                };
            };
            /** @description Not Modified: If-None-Match matches the current ETag. No body, no charge. */
            304: {
                headers: {
                    /** @description The version of the answer; send it back in If-None-Match for a 304 */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key may not use this route: wrong role, missing scope, or a grant narrower than required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many requests for the key's plan; see Retry-After (BWN_ERR_RATE_LIMITED) */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Internal error (BWN_ERR_INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
