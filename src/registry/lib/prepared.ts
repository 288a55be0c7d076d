export { prepared } from '../../db/prepared';
