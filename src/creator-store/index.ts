export { databaseChannelStore } from './channel-store';
export { createHostedChannels } from './hosted';
export { hostedChannelRoutes } from './routes';
