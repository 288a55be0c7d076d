export { databaseChannelStore } from './channel-store';
