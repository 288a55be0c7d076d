/** Entry of the identity-provider bundle (identity-provider.html): hands the SDK wrapper to the page that loaded it. */
import { PROVIDER_SDK_GLOBAL } from './load';
import * as sdk from './privy';

(globalThis as { [PROVIDER_SDK_GLOBAL]?: typeof sdk })[PROVIDER_SDK_GLOBAL] = sdk;
