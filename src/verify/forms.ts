/** The forms `fkgqa verify` runs each gold query in (light: the CLI reads them for its help). */

/** The two federated forms of a query. */
export type FederationForm = 'federated' | 'trivial';
/** Both forms, in report order. */
export const FORMS: FederationForm[] = ['federated', 'trivial'];
