/**
 * Node versions: version 2 moved the execution-wide settings out of Options into Execution Settings
 * and made IDs that have a list endpoint resource locators. Parameters that differ carry
 * `@version` display options (`forVersion1` / `fromVersion2`); a saved version-1 workflow keeps
 * its parameters and behaviour. The tool variant (`@tool`) hides what an AI agent cannot use.
 */
import type { INodeProperties } from 'n8n-workflow';

/** Display options that show a parameter on node version 1 only. */
const VERSION_1 = { '@version': [1] };

/** Display options that show a parameter from node version 2 on. */
const FROM_VERSION_2 = { '@version': [{ _cnd: { gte: 2 } }] };

/** `field`, shown only on the node versions `versions` selects (added to its own `show`). */
function onVersions(versions: typeof VERSION_1 | typeof FROM_VERSION_2, field: INodeProperties) {
	return {
		...field,
		displayOptions: {
			...field.displayOptions,
			show: { ...field.displayOptions?.show, ...versions },
		},
	};
}

export const forVersion1 = (field: INodeProperties): INodeProperties =>
	onVersions(VERSION_1, field);
export const fromVersion2 = (field: INodeProperties): INodeProperties =>
	onVersions(FROM_VERSION_2, field);

/** Display options of a choice an AI agent cannot use (a binary upload): hidden in the node's tool variant. */
export const NOT_AS_TOOL = { hide: { '@tool': [true] } };

/**
 * The tool variant's safety switch (node version 3): operations that cost credits or change data
 * are offered to an AI agent only when it is on (`resources.ts` hides them, the router refuses them).
 */
export const allowChangesField: INodeProperties = {
	displayName: 'Allow Billed or Destructive Operations',
	name: 'allowChanges',
	type: 'boolean',
	// A switch the agent could fill in ($fromAI) would not be a switch.
	noDataExpression: true,
	default: false,
	description:
		'Whether an AI agent may run operations that cost credits (Create, Upload) or change or delete data (Update, Delete). Off: the tool offers only Get, Get Many and Download.',
	displayOptions: { show: { '@tool': [true], '@version': [{ _cnd: { gte: 3 } }] } },
};
