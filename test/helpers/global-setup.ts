// Replaced by the database template setup once the controller foundation lands.
export default async function setup(): Promise<void> {}
