/**
 * The associated data an endpoint's authentication secret (client key, client secret) is sealed
 * under: the endpoint's id and what the value is for, so it opens only there and only as that,
 * never as the endpoint's signing secret (docs/decisions/0319-authenticated-receivers.md).
 */
export const authenticationAad = (endpointId: string) => `${endpointId}:authentication`;
