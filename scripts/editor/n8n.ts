/** What scripts/e2e imports from here: the module is scripts/lib/n8n-server.ts. */
export { importFixtures, n8nCall, OWNER, setupOwner, type N8nContext } from '../lib/n8n-server';
