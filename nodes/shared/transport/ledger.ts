/**
 * The ledger of what the service created in an execution (`docs/service-api.md` §node, Nothing
 * lost): every job or document a create was answered with, so that a failed execution names them.
 */

/** A job or document the service created: enough to fetch it again with Get. */
export interface CreatedResource {
	/** "Extract", "Parsing", "Extraction", "Document". */
	resourceName: string;
	id: string;
	itemIndex: number;
}
