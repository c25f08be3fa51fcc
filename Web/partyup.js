// (screens of this app are being built)
export const routes = {};
